/** The configuration file's published JSON Schema: a dump of a populated gateway is valid against it, as an editor would check. */
import t from 'tap'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { parse as parseYaml } from 'yaml'
import { startManagement } from '../../helpers/management.js'
import { populate } from './populate.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

t.test('GET /api/v1/config/schema.json validates dumps', async t => {
  const m = await startManagement(t, 'embedded')
  let r = await m.call('GET', '/api/v1/config/schema.json', { role: null })
  t.equal(r.status, 200, 'public: an editor fetches it without a token')
  const schema = r.body
  t.equal(schema.$id, '/api/v1/config/schema.json')
  // An editor's checker: no defaults filled in, every problem reported.
  const validate = addFormats(new Ajv({ allErrors: true, strict: false })).compile(schema)

  await populate(t, m)
  r = await m.call('GET', '/api/v1/config', { headers: { accept: 'application/yaml' } })
  t.equal(r.status, 200)
  const file = parseYaml(r.body)
  t.ok(validate(file), 'the YAML dump is valid against the published schema')
  t.same(validate.errors ?? [], [])

  const broken = structuredClone(file)
  broken.collections[0].base_path = 'no-slash'
  broken.policies[0].rate_limit = { requests: 0, per_seconds: 60 }
  broken.credentials[0].type = 'carrier_pigeon'
  broken.clients[0].profiles[0].surprise = true
  t.notOk(validate(broken), 'a broken file is refused')
  const where = (validate.errors ?? []).map(e => e.instancePath)
  for (const path of ['/collections/0/base_path', '/policies/0/rate_limit/requests', '/credentials/0/type', '/clients/0/profiles/0']) {
    t.ok(where.includes(path), `the schema names ${path}`)
  }
})
