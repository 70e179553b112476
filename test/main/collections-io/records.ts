/** Full records, as the store would return them, built from the partial ones an import yields. */
import type { Collection, Proxy } from '../../../src/common/types.js'
import { storedUpstream } from '../../../src/common/upstream-settings.js'

const stamp = { version: 3, created_at: '2025-01-02T03:04:05.000Z', updated_at: '2025-01-02T03:04:05.000Z' }

export function collectionRecord (c: Partial<Collection>, id = 'col_1'): Collection {
  const upstreamUrl = c.upstream_url ?? 'http://127.0.0.1:9000'
  return {
    id, ...stamp, name: 'c', description: '', base_path: '/c', upstream_url: upstreamUrl,
    upstream: c.upstream ?? storedUpstream(null, upstreamUrl), status: 'active', headers: [], auth_required: true, cors: null, ...c
  }
}

export function proxyRecords (proxies: Array<Partial<Proxy>>, over: Partial<Proxy> = {}, collectionId = 'col_1'): Proxy[] {
  return proxies.map((p, i) => ({
    id: `prx_${i}`, ...stamp, collection_id: collectionId, name: `p${i}`, description: '', methods: ['GET'],
    path: '/', target_path: '/', headers: [], parameters: [], request_schema: null, response_schema: null,
    streaming: false, status: 'draft', workflow_enabled: false, workflow: null, workflow_id: `wf_${i}`,
    timeout_ms: null, max_body_bytes: null, cache: null, compression: true, apply_parameter_defaults: false, websocket: false, ...p, ...over
  }))
}
