// How the bulk collection import scales as the store fills (issue 31: 10 s for the first file of
// 1,000 proxies, 51 s by the tenth).
//
//   npm run build && node bench/import-scale.mjs [embedded|postgres] [files=10] [collections per file=10] [proxies per collection=100]
//
// Starts the compiled service in this process the way `npm start` does (request log on, memory
// cache), then imports <files> collection files one after another through
// POST /api/v1/collections/import?keep_status=true (published proxies with a path parameter, a query
// parameter and a request schema, as an exported file has them), timing each from the POST until
// its answer (the answer waits until this instance serves the change). Prints one JSON object:
// per file the milliseconds, and the ratio of the last file's time to the first's (flat: about 1).
import http from 'node:http'
import { loadConfig } from '../dist/src/main/config/config.js'
import { start } from '../dist/src/main/server.js'
import { createLogger } from '../dist/src/main/logger.js'
import { benchStore } from './service-client.mjs'

const variant = process.argv[2] ?? 'embedded'
const FILES = Number(process.argv[3] ?? 10)
const C = Number(process.argv[4] ?? 10)
const P = Number(process.argv[5] ?? 100)

const store = await benchStore(variant, 'import')
const config = loadConfig({ HOST: '127.0.0.1', GATEWAY_PORT: '0', MANAGEMENT_PORT: '0', LOG_LEVEL: 'warn', ...store.env })
const service = await start(config, { logger: createLogger(config) })
const token = await service.issueToken('bench-importer', 'editor')

const proxy = (c, p) => ({
  name: `op-${c}-${p}`, description: '', methods: ['GET', 'POST'], path: `/items-${p}/{id}`, target_path: `/items-${p}/{id}`, headers: [],
  parameters: [{ name: 'id', location: 'path', type: 'string', required: true }, { name: 'q', location: 'query', type: 'string', required: false, default: 'x' }],
  request_schema: { type: 'object', properties: { n: { type: 'integer' } } }, response_schema: null,
  streaming: false, status: 'published', workflow_enabled: false, workflow: null, timeout_ms: null, max_body_bytes: null
})
const file = f => ({
  format: 'gatehouse.collection',
  format_version: 1,
  collections: Array.from({ length: C }, (_, c) => ({
    collection: { name: `import-${f}-${c}`, description: '', base_path: `/import-${f}-${c}`, upstream_url: 'http://127.0.0.1:9/', status: 'active', headers: [], auth_required: true },
    proxies: Array.from({ length: P }, (_, p) => proxy(c, p))
  }))
})

const post = body => new Promise((resolve, reject) => {
  const data = JSON.stringify(body)
  const req = http.request({ host: '127.0.0.1', port: service.managementPort, method: 'POST', path: '/api/v1/collections/import?keep_status=true', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, res => {
    let text = ''
    res.setEncoding('utf8')
    res.on('data', d => { text += d })
    res.on('end', () => { res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode} ${text.slice(0, 300)}`)) })
  })
  req.on('error', reject)
  req.end(data)
})

const files = []
for (let f = 0; f < FILES; f++) {
  const body = file(f)
  const t0 = performance.now()
  const r = await post(body)
  files.push(Math.round(performance.now() - t0))
  if (r.items.length !== C) throw new Error(`file ${f}: ${r.items.length} collections`)
}
await service.close()
await store.drop()
console.log(JSON.stringify({ variant, files: FILES, proxies_per_file: C * P, ms_per_file: files, last_to_first: +(files.at(-1) / files[0]).toFixed(2) }))
process.exit(0)
