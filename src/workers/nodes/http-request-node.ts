/**
 * http_request_node: method, URL and headers (expressions already evaluated),
 * timeout_ms, body json | raw | form_data | multipart. Output:
 * `{ response: { status, headers, body }, timedOut }`; JSON bodies are parsed.
 * Redirects are followed by hand (at most 5), each hop through the address guard
 * (outbound-guard.ts). A non-2xx answer fails the node unless the node continues on
 * error or a condition node downstream reads its status (src/common/status-handling.ts
 * decides which rule applies; the workflow then handles the error itself). A timeout
 * is not an error (`timedOut: true`).
 */
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { createHash } from 'node:crypto'
import { formatTraceparent, type TraceContext } from '../../common/trace-context.js'
import { describeStatusRule, statusRuleOf } from '../../common/status-handling.js'
import { NodeError, type HttpCredential, type NodeContext, type NodeResult } from '../engine/types.js'
import { allowed, guardedLookup, isBlockedAddress, parseAllowlist, type Allowlist } from './outbound-guard.js'
import { expr, int, object, plain, required } from './describe.js'
import type { NodeType } from './node-type.js'

const MAX_RESPONSE = 10 * 1024 * 1024
const MAX_REDIRECTS = 5
/** Headers still sent after a redirect to another origin: nothing that could carry a secret. */
// The trace context is no secret: the redirected request stays in the node run's trace.
const CROSS_ORIGIN_KEPT = new Set(['accept', 'accept-language', 'user-agent', 'content-type', 'content-language', 'traceparent', 'tracestate'])

/** OAuth2 access tokens of this worker, until shortly before they expire. */
const tokens = new Map<string, { token: string, until: number }>()
const MAX_TOKENS = 1000

/** An OAuth2 client-credentials token (RFC 6749 4.4; client authenticated with HTTP Basic), cached until it expires. */
async function oauth2Token (c: Extract<HttpCredential, { type: 'oauth2_client_credentials' }>['config'], list: Allowlist, signal: AbortSignal): Promise<string> {
  const key = createHash('sha256').update(`${c.token_url}\0${c.client_id}\0${c.client_secret}\0${c.scope ?? ''}`).digest('hex')
  const hit = tokens.get(key)
  if (hit !== undefined && hit.until > Date.now()) return hit.token
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  if (c.scope !== undefined && c.scope !== '') form.set('scope', c.scope)
  const basic = Buffer.from(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret)}`).toString('base64')
  let url: URL
  try { url = new URL(c.token_url) } catch { throw new NodeError('The OAuth2 credential\'s token_url is not a URL.') }
  const res = await once(url, 'POST', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` }, Buffer.from(form.toString()), list, signal)
  let body: { access_token?: unknown, expires_in?: unknown } = {}
  try { body = JSON.parse(res.body.toString('utf8')) } catch {}
  if (res.status !== 200 || typeof body.access_token !== 'string') throw new NodeError(`The OAuth2 token endpoint ${url.origin} answered ${res.status} without an access_token.`)
  const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600
  if (tokens.size >= MAX_TOKENS) tokens.delete(tokens.keys().next().value as string)
  tokens.set(key, { token: body.access_token, until: Date.now() + Math.max(0, lifetime - 30) * 1000 })
  return body.access_token
}

/** Adds the credential's header (Authorization, or its own header) for the request's origin. */
async function applyCredential (c: HttpCredential, headers: Record<string, string>, list: Allowlist, signal: AbortSignal): Promise<void> {
  const set = (name: string, value: string) => {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k]
    headers[name] = value
  }
  switch (c.type) {
    case 'http_basic': set('authorization', `Basic ${Buffer.from(`${c.config.username}:${c.config.password}`).toString('base64')}`); break
    case 'http_bearer': set('authorization', `Bearer ${c.config.token}`); break
    case 'http_header': set(c.config.name, c.config.value); break
    case 'oauth2_client_credentials': set('authorization', `Bearer ${await oauth2Token(c.config, list, signal)}`); break
  }
}

interface Body { type?: string, content?: unknown }

function encodeBody (body: Body | undefined, headers: Record<string, string>): Buffer | null {
  if (body === undefined || body === null || body.content === undefined || body.content === null) return null
  const set = (k: string, v: string) => { if (!Object.keys(headers).some(h => h.toLowerCase() === k)) headers[k] = v }
  switch (body.type ?? 'json') {
    case 'json': set('content-type', 'application/json'); return Buffer.from(JSON.stringify(body.content))
    case 'raw': return Buffer.from(typeof body.content === 'string' ? body.content : JSON.stringify(body.content))
    case 'form_data': {
      set('content-type', 'application/x-www-form-urlencoded')
      const sp = new URLSearchParams()
      for (const [k, v] of Object.entries(body.content as Record<string, unknown>)) sp.append(k, typeof v === 'string' ? v : JSON.stringify(v))
      return Buffer.from(sp.toString())
    }
    case 'multipart': {
      const boundary = `----gatehouse${randomBytes(12).toString('hex')}`
      set('content-type', `multipart/form-data; boundary=${boundary}`)
      const c = body.content as { fields?: Record<string, unknown>, files?: Array<{ name: string, filename: string, content_type?: string, data_base64: string }> }
      const parts: Buffer[] = []
      for (const [k, v] of Object.entries(c.fields ?? {})) {
        parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${k.replace(/"/g, '%22')}"\r\n\r\n${typeof v === 'string' ? v : JSON.stringify(v)}\r\n`))
      }
      for (const f of c.files ?? []) {
        parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${f.name.replace(/"/g, '%22')}"; filename="${f.filename.replace(/"/g, '%22')}"\r\ncontent-type: ${f.content_type ?? 'application/octet-stream'}\r\n\r\n`))
        parts.push(Buffer.from(f.data_base64, 'base64'), Buffer.from('\r\n'))
      }
      parts.push(Buffer.from(`--${boundary}--\r\n`))
      return Buffer.concat(parts)
    }
    default: throw new NodeError(`body.type '${String(body.type)}' is not supported; use json, raw, form_data or multipart.`)
  }
}

function once (url: URL, method: string, headers: Record<string, string>, body: Buffer | null, list: Allowlist, signal: AbortSignal):
Promise<{ status: number, headers: http.IncomingHttpHeaders, body: Buffer }> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    // IP literals never reach a lookup function: check them here.
    if (net.isIP(host) !== 0 && isBlockedAddress(host) && !allowed(list, host, host)) {
      reject(new NodeError(`The address ${host} is not allowed for workflow requests (private, loopback or link-local); add it to OUTBOUND_ALLOWLIST to permit it.`))
      return
    }
    const lib = url.protocol === 'https:' ? https : http
    const req = lib.request(url, { method, headers: body === null ? headers : { ...headers, 'content-length': String(body.length) }, lookup: guardedLookup(list), signal, agent: false }, res => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        size += c.length
        if (size > MAX_RESPONSE) { req.destroy(new NodeError(`The response is larger than ${MAX_RESPONSE} bytes.`)); return }
        chunks.push(c)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('socket', s => {
      s.once('connect', () => {
        const addr = s.remoteAddress ?? ''
        if (isBlockedAddress(addr) && !allowed(list, host, addr)) req.destroy(new NodeError(`The address ${addr} is not allowed for workflow requests.`))
      })
    })
    req.on('error', reject)
    req.end(body ?? undefined)
  })
}

/** W3C trace context of this node run, replacing any the node's settings gave (this run is the parent). */
function propagate (trace: TraceContext, headers: Record<string, string>): void {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === 'traceparent' || k.toLowerCase() === 'tracestate') delete headers[k]
  headers.traceparent = formatTraceparent(trace.trace_id, trace.span_id, trace.sampled)
  if (trace.state !== undefined) headers.tracestate = trace.state
}

async function runHttpRequest (ctx: NodeContext): Promise<NodeResult> {
  const s = ctx.settings
  const method = String(s.method ?? 'GET').toUpperCase()
  let url: URL
  try { url = new URL(String(s.url ?? '')) } catch { throw new NodeError(`url '${String(s.url)}' is not an absolute URL.`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new NodeError('url must use http or https.')
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries((s.headers ?? {}) as Record<string, unknown>)) headers[k] = String(v)
  const body = encodeBody(s.body as Body | undefined, headers)
  if (ctx.trace !== undefined) propagate(ctx.trace, headers)
  const timeoutMs = Math.max(1, Math.min(Number(s.timeout_ms ?? 30_000), ctx.deadline - Date.now()))
  const ac = new AbortController()
  const timer = setTimeout(() => ac.abort(), timeoutMs)
  const onOuter = () => ac.abort()
  ctx.signal.addEventListener('abort', onOuter)
  const list = parseAllowlist(ctx.allowlist)
  const credId = s.credentials_id
  try {
    if (typeof credId === 'string' && credId !== '') {
      const cred = ctx.run.task.credentials?.[credId]
      if (cred === undefined) throw new NodeError(`credentials_id '${credId}' names no http_basic, http_bearer, http_header or oauth2_client_credentials credential that can be opened.`)
      await applyCredential(cred, headers, list, ac.signal)
    }
    let current = url
    let m = method
    let b = body
    let sent = headers
    for (let hop = 0; ; hop++) {
      const res = await once(current, m, sent, b, list, ac.signal)
      if ([301, 302, 303, 307, 308].includes(res.status) && typeof res.headers.location === 'string') {
        if (hop >= MAX_REDIRECTS) throw new NodeError(`More than ${MAX_REDIRECTS} redirects.`)
        const next = new URL(res.headers.location, current)
        // Another origin gets none of the node's own headers nor the credential (a redirect must not leak them).
        if (next.origin !== current.origin) sent = Object.fromEntries(Object.entries(sent).filter(([k]) => CROSS_ORIGIN_KEPT.has(k.toLowerCase())))
        current = next
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && m === 'POST')) { m = 'GET'; b = null }
        continue
      }
      const text = res.body.toString('utf8')
      const type = String(res.headers['content-type'] ?? '')
      let parsed: unknown = text
      if (/json/i.test(type)) { try { parsed = JSON.parse(text) } catch { parsed = text } }
      const hdrs: Record<string, string> = {}
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) hdrs[k] = Array.isArray(v) ? v.join(', ') : v
      return { output: { response: { status: res.status, headers: hdrs, body: parsed }, timedOut: false } }
    }
  } catch (err) {
    if (ac.signal.aborted && !ctx.signal.aborted) return { output: { response: { status: 0, headers: {}, body: null }, timedOut: true } }
    if (err instanceof NodeError) throw err
    throw new NodeError(`The request to ${url.origin} failed: ${(err as Error).message}`)
  } finally {
    clearTimeout(timer)
    ctx.signal.removeEventListener('abort', onOuter)
  }
}

export const httpRequestNode: NodeType = {
  description: plain('http_request_node', 'action', 'Calls an HTTP API. A non-2xx answer fails the run unless continue_on_error is on or a condition node downstream (right after it or later) tests {{<name>.response.status}}.', {
    method: { anyOf: [{ type: 'string', pattern: '^(?:[Gg][Ee][Tt]|[Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee]|[Hh][Ee][Aa][Dd]|[Oo][Pp][Tt][Ii][Oo][Nn][Ss])$' }, expr], description: 'GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS (default GET)' },
    url: required('absolute http:// or https:// URL; may embed {{ }} expressions'),
    headers: object('an object of header names to values'),
    timeout_ms: int(1, 3_600_000),
    credentials_id: { type: ['string', 'null'], description: 'id of an http_basic, http_bearer, http_header or oauth2_client_credentials credential: its secret is added to the request (never to another origin after a redirect) and stays out of the workflow' },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { type: { type: 'string', enum: ['json', 'raw', 'form_data', 'multipart'] }, content: {} },
      description: '{type: "json"|"raw"|"form_data"|"multipart", content}'
    },
    continue_on_error: { type: 'boolean', description: 'true: a non-2xx answer is output like any other and the run goes on (default false: it fails the run unless a condition downstream reads the status); a network failure still fails the run' }
  }, ['url'], '{response: {status, headers, body}, timedOut}', 'One output. To handle a non-2xx answer, connect a condition_node that tests {{<name>.response.status}} downstream (directly or after other nodes), or set continue_on_error.'),
  run: runHttpRequest,
  // Its answer's non-2xx status follows the rule (src/common/status-handling.ts), applied once the answer is in.
  statusRule: true,
  afterRun: (node, result, outEdges, nodes, typeOf) => {
    const out = result.output as { response?: { status?: number }, timedOut?: boolean }
    const st = out.response?.status ?? 0
    if (out.timedOut === true || (st >= 200 && st < 300)) return
    const rule = statusRuleOf(node, nodes, outEdges, typeOf)
    if (rule.rule === 'fails') throw new NodeError(`The backend answered ${st}. ${describeStatusRule(node, rule)}`)
  },
  needs: { credentialId: settings => typeof settings.credentials_id === 'string' && settings.credentials_id !== '' ? settings.credentials_id : undefined }
}
