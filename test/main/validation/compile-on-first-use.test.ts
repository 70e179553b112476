/**
 * Schemas are compiled on their first use, not at start: every one still compiles, a validator
 * answers and reports its errors as Ajv's own function does, from its first call on.
 */
import t from 'tap'
import { Ajv } from 'ajv'
import { startManagement } from '../../helpers/management.js'
import { ajv, checkOnlyAjv, compileOnFirstUse } from '../../../src/main/validation/ajv.js'
import { CONFIG_SCHEMAS } from '../../../src/main/credentials/schemas.js'
import { NODE_CATALOGUE } from '../../../src/common/workflow-catalogue.js'

t.test('a validator compiled on first use answers as the compiled one, errors included', async t => {
  const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 }, n: { type: 'integer', default: 3 } }, additionalProperties: false }
  const lazy = compileOnFirstUse(new Ajv({ allErrors: true, useDefaults: true }), schema)
  const eager = new Ajv({ allErrors: true, useDefaults: true }).compile(schema)
  for (const data of [{ name: 'a' }, {}, { name: '', extra: 1 }, 'text', { name: 'b', n: 'x' }]) {
    const [a, b] = [structuredClone(data), structuredClone(data)]
    t.equal(lazy(a), eager(b), JSON.stringify(data))
    t.same(lazy.errors, eager.errors, `errors for ${JSON.stringify(data)}`)
    t.same(a, b, 'defaults filled in alike')
  }
  t.equal(lazy({ name: 'ok' }), true)
  t.equal(lazy.errors, null, 'a passing call clears the errors of the one before')
  const broken = compileOnFirstUse(new Ajv(), { type: 'no-such-type' })
  t.throws(() => broken({}), /type/, 'a bad schema fails on its first use')
})

t.test('every management body, credential and node settings schema compiles', async t => {
  const m = await startManagement(t)
  const withBody = m.server.router.routes.filter(r => r.validate !== null)
  t.ok(withBody.length >= 20, `routes with a body schema (${withBody.length})`)
  for (const r of withBody) t.doesNotThrow(() => r.validate!({}), `${r.method} /${r.segments.join('/')}`)
  for (const [type, schema] of Object.entries(CONFIG_SCHEMAS)) t.doesNotThrow(() => ajv.compile(schema), `credential ${type}`)
  for (const d of NODE_CATALOGUE) t.doesNotThrow(() => checkOnlyAjv.compile(d.settings_schema), `node ${d.type}`)

  // What a client sees: the first bad body gets the full 400, as every later one.
  for (let i = 0; i < 2; i++) {
    const r = await m.call('POST', '/api/v1/collections', { body: { base_path: 3 } })
    t.equal(r.status, 400)
    t.match(r.body.error.details, [{ field: 'name', message: 'is required' }], `request ${i + 1}`)
  }
})
