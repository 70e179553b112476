/**
 * What making the gateway match a configuration file would change, resource by resource,
 * compared by key (collection: base_path; proxy: base_path + methods + path; policy, client,
 * credential: name; profile: client name + profile name). Without `prune`, what the file does
 * not name is left alone and not listed. Credential secrets are compared as the `${ENV}`
 * references both sides hold: the service never reveals the values.
 */
import { isDeepStrictEqual } from 'node:util'
import { proxyKey, type ConfigFile } from './dump.js'

export interface ConfigChange { kind: 'collection' | 'proxy' | 'policy' | 'client' | 'profile' | 'credential', key: string, action: 'create' | 'update' | 'delete' }

type Keyed = Map<string, { kind: ConfigChange['kind'], value: unknown }>

/** Every resource of a file by `kind key`, each without its children (those are resources of their own). */
function resources (file: ConfigFile): Keyed {
  const out: Keyed = new Map()
  const put = (kind: ConfigChange['kind'], key: string, value: unknown) => out.set(`${kind}\u0000${key}`, { kind, value })
  for (const { proxies, ...c } of file.collections ?? []) {
    put('collection', c.base_path, c)
    for (const p of proxies ?? []) put('proxy', `${c.base_path} ${proxyKey(p)}`, p)
  }
  for (const p of file.policies ?? []) put('policy', p.name, p)
  for (const { profiles, ...c } of file.clients ?? []) {
    put('client', c.name, c)
    for (const p of profiles ?? []) put('profile', `${c.name}/${p.name}`, p)
  }
  for (const c of file.credentials ?? []) put('credential', c.name, c)
  return out
}

/** The changes that turn `current` into `wanted`, in file order (creates and updates, then deletes). */
export function diffConfig (current: ConfigFile, wanted: ConfigFile, opts: { prune: boolean }): ConfigChange[] {
  const have = resources(current)
  const want = resources(wanted)
  const changes: ConfigChange[] = []
  for (const [id, { kind, value }] of want) {
    const key = id.slice(id.indexOf('\u0000') + 1)
    const now = have.get(id)
    if (now === undefined) changes.push({ kind, key, action: 'create' })
    else if (!isDeepStrictEqual(JSON.parse(JSON.stringify(now.value)), JSON.parse(JSON.stringify(value)))) changes.push({ kind, key, action: 'update' })
  }
  if (opts.prune) {
    for (const [id, { kind }] of have) if (!want.has(id)) changes.push({ kind, key: id.slice(id.indexOf('\u0000') + 1), action: 'delete' })
  }
  return changes
}
