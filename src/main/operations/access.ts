/** Policy and client operations (admin writes, viewer reads); profiles are in profiles.ts. */
import { conflict } from '../../common/errors.js'
import type { BaseRecord, Page } from '../../common/types.js'
import { clients, policies, profilesUsingPolicy, type ClientRecord, type PolicyRecord } from '../store/access.js'
import type { records } from '../store/records.js'
import type { PageQuery } from '../store/rows.js'
import type { Caller, Change, OperationDeps, RecordRef } from './types.js'

type Deps = Pick<OperationDeps, 'store' | 'effects'>
type Repo<R extends BaseRecord> = Pick<ReturnType<typeof records<R>>, 'list' | 'get' | 'insert' | 'update'>

/** List, read, create and update of a simple record: the same four operations, each change with its event. */
function recordOperations<R extends BaseRecord> (repo: Repo<R>, defaults: Record<string, unknown>, change: (id: string, operation: 'created' | 'updated') => Change) {
  return {
    async list (deps: Deps, _caller: Caller, input: { page: PageQuery }): Promise<Page<R>> {
      return await repo.list(deps.store, input.page)
    },
    async get (deps: Deps, _caller: Caller, input: RecordRef): Promise<R> {
      return await repo.get(deps.store, input.id)
    },
    async create (deps: Deps, caller: Caller, input: { fields: Record<string, unknown> }): Promise<R> {
      const r = await deps.store.tx(async q => await repo.insert(q, { ...defaults, ...input.fields }))
      deps.effects.changed(caller, change(r.id, 'created'))
      return r
    },
    async update (deps: Deps, caller: Caller, input: RecordRef & { fields: Record<string, unknown> }): Promise<R> {
      const { after } = await deps.store.tx(async q => await repo.update(q, input.id, input.fields, input.ifMatch))
      deps.effects.changed(caller, change(after.id, 'updated'))
      return after
    }
  }
}

// --- policies ---------------------------------------------------------------
export const policyOps = recordOperations(policies, { status: 'enabled', description: '' },
  (id, operation) => ({ resource_kind: 'policy', policy_id: id, operation }))

/** Without a status the policy toggles enabled <-> disabled. */
export async function setPolicyStatusOp (deps: Deps, caller: Caller, input: RecordRef & { status?: PolicyRecord['status'] }): Promise<PolicyRecord> {
  const { after } = await deps.store.tx(async q => {
    const cur = await policies.lock(q, input.id)
    const next = input.status ?? (cur.status === 'enabled' ? 'disabled' : 'enabled')
    return await policies.update(q, input.id, { status: next }, input.ifMatch)
  })
  deps.effects.changed(caller, { resource_kind: 'policy', policy_id: after.id, operation: 'status_changed' })
  return after
}

/** A policy that profiles use cannot go (409 naming up to five of them). */
export async function deletePolicyOp (deps: Deps, caller: Caller, input: RecordRef): Promise<PolicyRecord> {
  const p = await deps.store.tx(async q => {
    const users = await profilesUsingPolicy(q, input.id, 5)
    if (users.length > 0) throw conflict(`The policy is used by profile${users.length > 1 ? 's' : ''} ${users.map(r => `'${r.name}'`).join(', ')}; assign them another policy first.`)
    return await policies.remove(q, input.id, input.ifMatch)
  })
  deps.effects.changed(caller, { resource_kind: 'policy', policy_id: p.id, operation: 'deleted' })
  return p
}

// --- clients ----------------------------------------------------------------
export const clientOps = recordOperations(clients, { status: 'active', description: '' },
  (id, operation) => ({ resource_kind: 'client', client_id: id, operation }))

/** Without a status the client toggles active <-> suspended. */
export async function setClientStatusOp (deps: Deps, caller: Caller, input: RecordRef & { status?: ClientRecord['status'] }): Promise<ClientRecord> {
  const { after } = await deps.store.tx(async q => {
    const next = input.status ?? ((await clients.lock(q, input.id)).status === 'active' ? 'suspended' : 'active')
    return await clients.update(q, input.id, { status: next }, input.ifMatch)
  })
  deps.effects.changed(caller, { resource_kind: 'client', client_id: after.id, operation: 'status_changed' })
  return after
}

export async function deleteClientOp (deps: Deps, caller: Caller, input: RecordRef): Promise<ClientRecord> {
  const c = await deps.store.tx(async q => await clients.remove(q, input.id, input.ifMatch))
  deps.effects.changed(caller, { resource_kind: 'client', client_id: c.id, operation: 'deleted' })
  return c
}

export type RecordOperations<R extends BaseRecord> = ReturnType<typeof recordOperations<R>>
