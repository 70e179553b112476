/**
 * Real API descriptions through the management API: GitHub's own OpenAPI description (13 MB,
 * about 1,200 operations, from @octokit/openapi; scripts/test-services.sh fetches it) imports
 * whole, exports and imports back with the same proxies; a YAML document and a Swagger 2.0 one
 * import as their content types say.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { stringify as toYaml } from 'yaml'
import { startManagement } from '../../helpers/management.js'
import { TOOLS_DIR } from '../../helpers/tools.js'

const github = path.join(TOOLS_DIR, 'api.github.com.json')
const petstore = fs.readFileSync(new URL('../../fixtures/openapi/petstore-3.0.json', import.meta.url), 'utf8')

t.test('GitHub\'s OpenAPI description imports whole and round-trips', async t => {
  t.ok(fs.existsSync(github), 'the description is there (scripts/test-services.sh fetches it)')
  const text = fs.readFileSync(github, 'utf8')
  const operations = Object.values(JSON.parse(text).paths as Record<string, Record<string, unknown>>)
    .reduce((n, item) => n + Object.keys(item).filter(k => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(k)).length, 0)
  t.ok(operations > 1000, `${operations} operations`)

  const m = await startManagement(t, 'postgres')
  const imported = await m.call('POST', '/api/v1/collections/import/openapi?base_path=/github', { body: text })
  t.equal(imported.status, 201, JSON.stringify(imported.body).slice(0, 300))
  t.equal(imported.body.upstream_url, 'https://api.github.com')
  const skipped = (imported.body.warnings as string[]).filter(w => /not imported/.test(w))
  t.equal(imported.body.proxy_count + skipped.length, operations, 'every operation became a proxy or a warning saying why not')
  t.ok(imported.body.proxy_count > 1200, `${imported.body.proxy_count} proxies`)
  t.ok(skipped.every(w => /cannot tell it from|The operation was not imported/.test(w)), 'skipped only where the gateway cannot serve the operation as described')
  const served = imported.body.proxy_count as number

  const doc = await m.call('GET', `/api/v1/collections/${imported.body.id}/openapi?include_drafts=true`)
  t.equal(doc.status, 200)
  t.equal(Object.values(doc.body.paths as Record<string, object>).reduce((n, item) => n + Object.keys(item).filter(k => k !== 'parameters').length, 0), served, 'the export describes every proxy')
  const again = await m.call('POST', '/api/v1/collections/import/openapi?base_path=/github-again&upstream_url=https://api.github.com', { body: doc.body })
  t.equal(again.status, 201, JSON.stringify(again.body).slice(0, 300))
  t.equal(again.body.proxy_count, served, 'and imports back with the same proxies')
})

t.test('YAML and Swagger 2.0 through the route, by content type', async t => {
  const m = await startManagement(t)
  const yaml = toYaml(JSON.parse(petstore))
  for (const type of ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain']) {
    const r = await m.call('POST', `/api/v1/collections/import/openapi?base_path=/pets-${type.replace(/\W/g, '-')}&upstream_url=http://127.0.0.1:9`, { body: yaml, headers: { 'content-type': type } })
    t.equal(r.status, 201, type)
    t.equal(r.body.proxy_count, 19)
  }
  const broken = await m.call('POST', '/api/v1/collections/import/openapi', { body: 'openapi: 3.0.0\ninfo: [unclosed\n', headers: { 'content-type': 'application/yaml' } })
  t.equal(broken.status, 400)
  t.match(broken.body.error.message, /not valid YAML or JSON \(line \d+, column \d+\)/)
  const swagger = { swagger: '2.0', info: { title: 'Pets', version: '1' }, host: '127.0.0.1:9', schemes: ['http'], paths: { '/pets': { get: { responses: { 200: { description: 'ok' } } } } } }
  const s = await m.call('POST', '/api/v1/collections/import/openapi', { body: toYaml(swagger), headers: { 'content-type': 'application/yaml' } })
  t.equal(s.status, 201)
  t.equal(s.body.upstream_url, 'http://127.0.0.1:9')
  t.match(s.body.warnings.join('\n'), /Swagger 2\.0; it was upgraded to OpenAPI 3\.1/)
  const xml = await m.call('POST', '/api/v1/collections/import/openapi', { body: '<api/>', headers: { 'content-type': 'application/xml' } })
  t.equal(xml.status, 415)
  t.match(xml.body.error.message, /application\/json or application\/yaml/)
})
