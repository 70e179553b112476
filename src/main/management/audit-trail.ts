/**
 * The audit trail of the management listener. After every request the listener hands over
 * what happened; a successful change (any method but GET/HEAD) or a refused request (401, 403)
 * becomes an audit row. What changed is read from the route pattern:
 *
 *   PUT  /api/v1/collections/:id/status        -> collection  <id>  status_change
 *   POST /api/v1/clients/:clientId/profiles/:id/rotate -> profile <id> rotate
 *   POST /api/v1/collections                   -> collection  <reply body id>  create
 *
 * and a route may name its kind and action (`RouteOptions.audit`). Rows are written in the
 * background: a failed write logs a warning and never fails the request.
 */
import type { IncomingMessage } from 'node:http'
import type { Logger } from '../logger.js'
import { insertAuditEntries, type AuditEntryInput } from '../store/audit.js'
import type { Store } from '../store/types.js'
import type { Reply, RequestContext, Route } from './router.js'

export interface AuditObservation {
  req: IncomingMessage
  path: string
  route: Route | undefined
  ctx: RequestContext | undefined
  status: number
  reply: Reply | undefined
  /** The operation's own method when the HTTP request is another surface's (an MCP tool call). */
  method?: string
  source?: 'rest' | 'mcp'
}

export interface AuditTrail {
  /** Records what a REST request did, when it is a change or a refusal. Never throws. */
  observe (o: AuditObservation): void
  /** Records entries directly (for the management MCP: `source: 'mcp'`). Never throws. */
  record (entries: AuditEntryInput[]): void
  /** Resolves once every write started so far has finished. */
  settled (): Promise<void>
}

// Bounds the entries waiting, so a flood of refused requests cannot pile up without end.
const MAX_PENDING = 1000
const READS = new Set(['GET', 'HEAD', 'OPTIONS'])
/** POST routes that check or test something and change nothing. */
const NOT_CHANGES = new Set(['validate'])

/**
 * Entries queue up and are written by one writer at a time, each batch in one statement:
 * rows land in the order the requests finished (so the log's order is the order of events),
 * and a burst costs a few inserts rather than one per request.
 */
export function createAuditTrail (store: Store, logger: Logger): AuditTrail {
  let queue: AuditEntryInput[] = []
  let writing: Promise<void> | null = null
  let failing = false
  let dropped = 0
  const flush = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue
      queue = []
      try {
        await insertAuditEntries(store, batch)
        if (failing || dropped > 0) logger.info({ dropped }, 'audit log writes resumed')
        failing = false
        dropped = 0
      } catch (err) {
        if (!failing) logger.warn({ err: (err as Error).message }, 'audit log write failed; the request itself succeeded')
        failing = true
      }
    }
  }
  const record = (entries: AuditEntryInput[]): void => {
    if (entries.length === 0) return
    if (queue.length >= MAX_PENDING) {
      if (dropped++ === 0) logger.warn('audit log writes are backed up; entries are being dropped')
      return
    }
    const now = new Date()
    for (const e of entries) queue.push({ ...e, occurred_at: e.occurred_at ?? now })
    kick()
  }
  // Entries queued after the writer's last look are picked up by the next writer.
  const kick = (): void => {
    if (writing === null && queue.length > 0) writing = flush().finally(() => { writing = null; kick() })
  }
  return {
    record,
    observe (o) {
      try { record(entriesOf(o)) } catch (err) { logger.warn({ err: (err as Error).message }, 'audit entry could not be built') }
    },
    async settled () { while (writing !== null) await writing }
  }
}

function entriesOf (o: AuditObservation): AuditEntryInput[] {
  const method = (o.method ?? o.req.method ?? 'GET').toUpperCase()
  const denied = o.status === 401 || o.status === 403
  if (o.route === undefined || (!denied && (READS.has(method) || o.status >= 400 || o.route.opts.audit === false))) return []
  const what = describe(o.route, o.ctx?.params ?? {}, method)
  if (!denied && NOT_CHANGES.has(what.action)) return []
  const ids = what.id !== null ? [what.id] : denied ? [null] : idsOfReply(o.reply?.body)
  // `POST /proxies/bulk {"action": "publish"}` -> bulk_publish
  const bulk = what.action === 'bulk' && typeof o.ctx?.body?.action === 'string' ? `bulk_${String(o.ctx.body.action)}` : what.action
  const base = {
    actor_sub: o.ctx?.user?.sub ?? null,
    source: o.source ?? 'rest',
    action: denied ? 'denied' : bulk,
    resource_kind: what.kind,
    method,
    path: o.path,
    status: o.status,
    remote_addr: o.req.socket.remoteAddress ?? null
  }
  return ids.map(resource_id => ({ ...base, resource_id }))
}

const API_PREFIX = ['api', 'v1']
const EVENT_KINDS = new Set(['collection', 'proxy', 'credential', 'policy', 'client', 'profile'])

/** Kind, id and action of a route: the last `<noun>/:param` pair names the resource. */
export function describe (route: Route, params: Record<string, string>, method: string): { kind: string | null, id: string | null, action: string } {
  const segs = API_PREFIX.every((s, i) => route.segments[i] === s) ? route.segments.slice(2) : route.segments
  const isParam = (s: string | undefined) => s?.startsWith(':') === true
  let at = -1
  for (let i = segs.length - 2; i >= 0; i--) if (!isParam(segs[i]) && isParam(segs[i + 1])) { at = i; break }
  const head = segs[at < 0 ? 0 : at]
  let kind: string | null = head === undefined ? null : singular(head)
  // a nested resource that is not a kind of its own is named after its parent: workflows/:id/versions/:v -> workflow_version
  const parentSeg = at >= 2 && isParam(segs[at - 1]) ? segs[at - 2] : undefined
  const parent = parentSeg === undefined ? null : singular(parentSeg)
  if (kind !== null && parent !== null && !EVENT_KINDS.has(kind)) kind = `${parent}_${kind}`
  // segs[at + 1] is the parameter found beside segs[at] above
  const id = at < 0 ? null : params[segs[at + 1]!.slice(1)] ?? null
  const rest = segs.slice(at < 0 ? 1 : at + 2).filter(s => !isParam(s))
  if (rest[0] === 'workflow') { kind = `${kind ?? ''}_workflow`; rest.shift() }
  let action: string
  if (rest.length === 0) action = method === 'POST' ? 'create' : method === 'DELETE' ? 'delete' : 'update'
  else if (rest[0] === 'status' || rest[0] === 'toggle-status') action = 'status_change'
  else action = rest[0]!.replace(/-/g, '_') // rest is not empty here
  const named = route.opts.audit
  if (named !== undefined && named !== false) {
    kind = named.kind ?? kind
    action = named.action ?? action
  }
  return { kind, id, action }
}

function singular (noun: string): string {
  if (noun.endsWith('ies')) return `${noun.slice(0, -3)}y`
  if (noun.endsWith('sses') || noun.endsWith('xes')) return noun.slice(0, -2)
  return noun.endsWith('s') ? noun.slice(0, -1) : noun
}

/** Ids a reply names: a record (`id`), a list (`items[].id`) or bulk results (`results[]` that succeeded). */
function idsOfReply (body: unknown): Array<string | null> {
  const b = body as { id?: unknown, items?: unknown, results?: unknown } | undefined
  if (typeof b?.id === 'string') return [b.id]
  const list = Array.isArray(b?.items) ? b.items : Array.isArray(b?.results) ? b.results.filter((r: { ok?: boolean }) => r?.ok !== false) : null
  const ids = (list ?? []).map((x: { id?: unknown }) => x?.id).filter((x: unknown): x is string => typeof x === 'string')
  return ids.length > 0 ? ids : [null]
}
