/** Proxy operations: list, read, create, update, delete, duplicate, and bulk publish/unpublish/delete. */
import { notFound, validationFailed } from '../../common/errors.js'
import type { Page, Proxy } from '../../common/types.js'
import type { Role } from '../auth/roles.js'
import { checkProxyPaths } from '../management/validation.js'
import { createProxy, deleteProxy, duplicateProxy, getProxy, listProxies, patchProxy, updateProxy, type ProxyInput, type ProxyPatch } from '../store/proxies.js'
import type { PageQuery } from '../store/rows.js'
import { ajv } from '../validation/ajv.js'
import type { Caller, Change, OperationDeps, RecordRef } from './types.js'

type Deps = Pick<OperationDeps, 'store' | 'effects'>

/** A viewer reads published proxies only (drafts are for the roles that can change them). */
export const seesPublishedOnly = (who: { role: Role | null } | null): boolean => who?.role === 'viewer'

/** The proxy, or the 404 a viewer gets for a draft (as if it did not exist). */
export function visibleProxy (p: Proxy, who: { role: Role | null } | null): Proxy {
  if (p.status !== 'published' && seesPublishedOnly(who)) throw notFound(`Proxy '${p.id}' does not exist.`)
  return p
}

function checkSchemas (body: Partial<Proxy>): void {
  for (const f of ['request_schema', 'response_schema'] as const) {
    const s = body[f]
    if (s === undefined || s === null) continue
    try { ajv.compile(s) } catch (err) {
      throw validationFailed(`${f} is not a valid JSON Schema: ${(err as Error).message}.`, [{ field: f, message: `is not a valid JSON Schema: ${(err as Error).message}` }])
    }
  }
}

const change = (p: Proxy, operation: 'created' | 'updated' | 'deleted'): Change =>
  ({ resource_kind: 'proxy', proxy_id: p.id, collection_id: p.collection_id, operation })

// Drafts are work in progress: visible to the roles that can change them (editor, admin), not to viewers.
export async function listProxiesOp (deps: Deps, caller: Caller, input: { page: PageQuery, collection_id?: string }): Promise<Page<Proxy>> {
  return await listProxies(deps.store, input.page, { collection_id: input.collection_id, publishedOnly: seesPublishedOnly(caller) })
}

export async function getProxyOp (deps: Deps, caller: Caller, input: RecordRef): Promise<Proxy> {
  return visibleProxy(await getProxy(deps.store, input.id), caller)
}

export async function createProxyOp (deps: Deps, caller: Caller, input: { fields: Omit<ProxyInput, 'target_path'> & { target_path?: string } }): Promise<Proxy> {
  const body = { ...input.fields, target_path: input.fields.target_path ?? input.fields.path }
  checkProxyPaths(body.path, body.target_path, input.fields.target_path !== undefined)
  checkSchemas(body)
  const p = await createProxy(deps.store, body)
  deps.effects.changed(caller, change(p, 'created'))
  return p
}

export async function updateProxyOp (deps: Deps, caller: Caller, input: RecordRef & { fields: ProxyPatch }): Promise<Proxy> {
  const fields = input.fields
  checkSchemas(fields)
  const p = await deps.store.tx(async q => {
    const current = await getProxy(q, input.id)
    checkProxyPaths(fields.path ?? current.path, fields.target_path ?? current.target_path)
    return (await patchProxy(q, input.id, fields, input.ifMatch)).after
  })
  deps.effects.changed(caller, change(p, 'updated'))
  return p
}

export async function deleteProxyOp (deps: Deps, caller: Caller, input: RecordRef): Promise<Proxy> {
  const p = await deleteProxy(deps.store, input.id, input.ifMatch)
  deps.effects.changed(caller, change(p, 'deleted'))
  return p
}

export async function duplicateProxyOp (deps: Deps, caller: Caller, input: RecordRef & { collection_id?: string, name?: string, path?: string }): Promise<Proxy> {
  const { id, ifMatch: _unused, ...copy } = input
  if (copy.path !== undefined) {
    const source = await getProxy(deps.store, id)
    checkProxyPaths(copy.path, source.target_path)
  }
  const p = await duplicateProxy(deps.store, id, copy)
  deps.effects.changed(caller, change(p, 'created'))
  return p
}

export type BulkAction = 'publish' | 'unpublish' | 'delete'
export interface BulkResult { id: string, ok: boolean, error?: { code?: string, message?: string } }

/**
 * Each proxy on its own: one that fails (a coded error) is reported and the rest go on. The
 * events of the proxies that changed are published, and the configuration moves once, at the end.
 */
export async function bulkProxiesOp (deps: Deps, caller: Caller, input: { action: BulkAction, ids: string[] }): Promise<{ action: BulkAction, succeeded: number, failed: number, results: BulkResult[] }> {
  const { action, ids } = input
  const results: BulkResult[] = []
  const changes: Change[] = []
  try {
    for (const id of ids) {
      try {
        if (action === 'delete') changes.push(change(await deleteProxy(deps.store, id), 'deleted'))
        else changes.push(change(await updateProxy(deps.store, id, { status: action === 'publish' ? 'published' : 'draft' }), 'updated'))
        results.push({ id, ok: true })
      } catch (err) {
        const e = err as { status?: number, code?: string, message?: string }
        if (e.status === undefined) throw err
        results.push({ id, ok: false, error: { code: e.code, message: e.message } })
      }
    }
  } finally {
    // Published even when an uncoded failure stops the loop: the proxies before it did change.
    deps.effects.changed(caller, ...changes)
  }
  const failed = results.filter(r => !r.ok).length
  return { action, succeeded: results.length - failed, failed, results }
}

/** Drops a proxy's cached answers on every instance (`purge` reaches them all); nothing is stored, no event. */
export async function purgeProxyCacheOp (deps: { store: OperationDeps['store'], purge: (proxyId: string) => Promise<void> }, _caller: Caller, input: RecordRef): Promise<void> {
  const p = await getProxy(deps.store, input.id)
  await deps.purge(p.id)
}
