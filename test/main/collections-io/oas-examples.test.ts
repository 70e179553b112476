/**
 * A corpus of real documents that a package ships (@readme/oas-examples: Swagger 2.0 and OpenAPI
 * 3.0 and 3.1, each as JSON and YAML, covering callbacks, circular references, polymorphism and
 * discriminators, server variables, every parameter style, file uploads, webhooks): every one
 * imports through the management API or is refused with a 4xx that says why, never a 5xx.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import t from 'tap'
import { startManagement } from '../../helpers/management.js'

const root = path.dirname(createRequire(import.meta.url).resolve('@readme/oas-examples/package.json'))
const documents = ['2.0', '3.0', '3.1'].flatMap(v => ['json', 'yaml'].flatMap(format => {
  const dir = path.join(root, v, format)
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter(f => /\.(json|ya?ml)$/.test(f)).map(f => ({ v, format, file: path.join(dir, f), name: `${v}/${format}/${f}` })) : []
}))

t.test('every document of the corpus imports or is refused with a reason', async t => {
  t.ok(documents.length >= 100, `${documents.length} documents`)
  const m = await startManagement(t, 'postgres')
  const outcome: Record<string, string> = {}
  let n = 0
  for (const d of documents) {
    const r = await m.call('POST', `/api/v1/collections/import/openapi?base_path=/corpus-${n++}&upstream_url=http://127.0.0.1:9`, {
      body: fs.readFileSync(d.file, 'utf8'), headers: { 'content-type': d.format === 'json' ? 'application/json' : 'application/yaml' }
    })
    t.ok(r.status < 500, `${d.name}: ${r.status}`)
    if (r.status === 201) outcome[d.name] = `${r.body.proxy_count} proxies`
    else {
      t.ok(r.status >= 400 && typeof r.body.error?.message === 'string' && r.body.error.message.length > 10, `${d.name}: the refusal says why`)
      outcome[d.name] = `${r.status} ${r.body.error.message}`
    }
  }
  // The odd corners, named: each imports with its operations.
  for (const name of ['3.0/json/callbacks.json', '3.0/json/circular.json', '3.0/json/polymorphism.json', '3.0/json/discriminators.json',
    '3.0/json/server-variables.json', '3.0/json/parameters-style.json', '3.0/json/file-uploads.json',
    '2.0/json/petstore.json', '2.0/yaml/petstore.yaml', '3.0/yaml/petstore.yaml', '3.1/json/train-travel.json']) {
    t.match(outcome[name], /^\d+ proxies$/, `${name} imports (${outcome[name]})`)
  }
  // A 3.1 document of webhooks only is valid OpenAPI, but describes nothing to serve.
  t.match(outcome['3.1/json/webhooks.json'], /^400 .*paths is missing: this document describes only webhooks/)
  t.comment(JSON.stringify(outcome, null, 1))
})
