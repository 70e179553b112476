/**
 * cache_lookup_node: `operation` get | set, `key`, `value` (set), `ttl_seconds`.
 * get → `{ hit, value }` on handle `hit` or `miss`; set → `{ key, value, ttl_seconds }`.
 * The cache is the gateway's shared one (memory or Redis per CACHE_TYPE), reached
 * through the main thread; keys live under `workflow-cache:` so they never meet
 * the gateway's own keys.
 */
import { NodeError } from '../engine/types.js'
import { anyValue, int, plain, required } from './describe.js'
import type { NodeType } from './node-type.js'

const MAX_KEY = 512
const MAX_VALUE_BYTES = 1024 * 1024
const DEFAULT_TTL_SECONDS = 3600
const MAX_TTL_SECONDS = 30 * 24 * 3600
export const CACHE_KEY_PREFIX = 'workflow-cache:'

export const cacheLookupNode: NodeType = {
  description: {
    ...plain('cache_lookup_node', 'data', 'Reads or writes the shared cache (memory or Redis).', {
      operation: { type: 'string', enum: ['get', 'set'], description: '"get" (default) or "set"' },
      key: required('cache key; may embed {{ }} expressions'),
      value: anyValue('for set: the value to store'),
      ttl_seconds: int(1, 2_592_000)
    }, ['key'], 'get: {hit, value}; set: {key, value, ttl_seconds} (ttl default 3600)',
    'For operation "get", every outgoing edge needs sourceHandle "hit" or "miss"; "set" has one output and no handles.'),
    requires_source_handle: true,
    supported_source_handles: ['hit', 'miss'],
    default_source_handle: 'hit'
  },
  run: async ctx => {
    const name = ctx.node.name
    const s = ctx.settings
    const op = s.operation ?? 'get'
    if (op !== 'get' && op !== 'set') throw new NodeError(`Cache node '${name}': operation must be get or set.`)
    const key = typeof s.key === 'number' ? String(s.key) : s.key
    if (typeof key !== 'string' || key === '') throw new NodeError(`Cache node '${name}' needs a key (text).`)
    if (key.length > MAX_KEY) throw new NodeError(`Cache node '${name}': the key is longer than ${MAX_KEY} characters.`)
    if (ctx.kv === undefined) throw new NodeError(`Cache node '${name}' needs the shared cache, which this run does not have.`)
    try {
      if (op === 'get') {
        const value = await ctx.kv.get(CACHE_KEY_PREFIX + key)
        const hit = value !== undefined
        return { output: { hit, value: hit ? value : null }, handles: [hit ? 'hit' : 'miss'] }
      }
      const ttl = s.ttl_seconds === undefined || s.ttl_seconds === null || s.ttl_seconds === '' ? DEFAULT_TTL_SECONDS : Number(s.ttl_seconds)
      if (!Number.isFinite(ttl) || ttl <= 0 || ttl > MAX_TTL_SECONDS) throw new NodeError(`Cache node '${name}': ttl_seconds must be a number of seconds between 1 and ${MAX_TTL_SECONDS}.`)
      const value = s.value === undefined ? null : s.value
      const json = JSON.stringify(value)
      if (Buffer.byteLength(json) > MAX_VALUE_BYTES) throw new NodeError(`Cache node '${name}': the value is larger than ${MAX_VALUE_BYTES} bytes.`)
      await ctx.kv.set(CACHE_KEY_PREFIX + key, value, Math.round(ttl * 1000))
      return { output: { key, value, ttl_seconds: ttl } }
    } catch (err) {
      if (err instanceof NodeError) throw err
      throw new NodeError(`Cache node '${name}': ${(err as Error).message}`)
    }
  },
  // get branches on hit or miss; set has a single output.
  sourceHandles: settings => settings.operation === 'set' ? null : { handles: ['hit', 'miss'], required: true },
  pinnedHandles: out => [(out as { hit?: unknown })?.hit === true ? 'hit' : 'miss'],
  needs: { cache: true }
}
