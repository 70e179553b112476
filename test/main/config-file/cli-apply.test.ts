/** `gatehouse apply` as CI runs it (its exit codes), and the MCP tool apply_config. */
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startManagement } from '../../helpers/management.js'
import { createTempDir } from '../../helpers/db.js'
import { populate } from './populate.js'

const BIN = new URL('../../../bin/gatehouse.mjs', import.meta.url).pathname
const SECRETS = { GATEHOUSE_CREDENTIAL_API_TOKEN: 'bearer-s3cret', GATEHOUSE_CREDENTIAL_MAIL_BOX_PASSWORD: 'imap-s3cret' }

/** Runs the command without blocking this process (the listeners it calls live here). */
function run (args: string[], env: Record<string, string>): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    // Only the variables given: the test's own environment must not resolve references by chance.
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr })
    })
  })
}

t.test('gatehouse apply', async t => {
  const source = await startManagement(t, 'embedded')
  await populate(t, source)
  const target = await startManagement(t, 'embedded')
  const dir = await createTempDir(t)
  const file = join(dir, 'gateway.yaml')
  const dumped = await run(['dump'], { GATEHOUSE_URL: source.url, GATEHOUSE_TOKEN: await source.token('editor') })
  t.equal(dumped.code, 0, dumped.stderr)
  await writeFile(file, dumped.stdout)
  const env = { GATEHOUSE_URL: target.url, GATEHOUSE_TOKEN: await target.token('admin') }

  let r = await run(['apply', '-f', file], env)
  t.equal(r.code, 1, 'secrets not in the environment: exit 1')
  t.match(r.stderr, /credentials\[0\]\.config\.token: \$\{GATEHOUSE_CREDENTIAL_API_TOKEN\}/, 'every missing variable is named')
  t.match(r.stderr, /GATEHOUSE_CREDENTIAL_MAIL_BOX_PASSWORD/)
  t.same((await target.call('GET', '/api/v1/config', { role: 'editor' })).body.collections, [], 'and nothing was sent')

  r = await run(['apply', '-f', file, '--dry-run'], { ...env, ...SECRETS })
  t.equal(r.code, 2, 'dry run with changes: exit 2')
  t.equal(r.stdout.trim().split('\n').length, 10, 'one line per change')
  t.same((await target.call('GET', '/api/v1/config', { role: 'editor' })).body.collections, [], 'a dry run changes nothing')

  r = await run(['apply', '-f', file], { ...env, ...SECRETS })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^create collection \/orders$/m)
  const again = await run(['dump'], { GATEHOUSE_URL: target.url, GATEHOUSE_TOKEN: await target.token('editor') })
  t.equal(again.stdout, dumped.stdout, 'the applied gateway dumps byte for byte as its source')
  r = await run(['diff', '-f', file], env)
  t.equal(r.code, 0, 'diff: the same')

  r = await run(['apply', '-f', file], { ...env, ...SECRETS })
  t.equal(r.code, 0, 'nothing to change: exit 0')
  t.equal(r.stdout, '')
  t.match(r.stderr, /already matches/)
  r = await run(['apply', '-f', file, '--dry-run'], { ...env, ...SECRETS })
  t.equal(r.code, 0, 'a dry run with nothing to change: exit 0')

  const edited = parseYaml(dumped.stdout)
  edited.policies[0].rate_limit.requests = 0
  edited.collections[0].proxies[0].path = 'nope'
  await writeFile(file, toYaml(edited))
  r = await run(['apply', '-f', file], { ...env, ...SECRETS })
  t.equal(r.code, 3, 'a refused file: exit 3')
  t.match(r.stderr, /policies\[0\]\.rate_limit\.requests/)
  t.match(r.stderr, /collections\[0\]\.proxies\[0\]\.path/, 'every problem is printed')
  r = await run(['diff', '-f', file], env)
  t.equal(r.code, 2, 'diff: different')

  r = await run(['apply', '-f', file], { ...env, ...SECRETS, GATEHOUSE_TOKEN: await target.token('editor') })
  t.equal(r.code, 1, 'a token of too low a role: exit 1')
  t.match(r.stderr, /403/)
  r = await run(['apply', '-f', file], { ...env, GATEHOUSE_URL: 'http://127.0.0.1:9' })
  t.equal(r.code, 1, 'unreachable: exit 1')
  r = await run(['apply', '-f', join(dir, 'missing.yaml')], env)
  t.equal(r.code, 1, 'unreadable file: exit 1')
})

t.test('the MCP tool apply_config', async t => {
  const m = await startManagement(t, 'embedded')
  const transport = new StreamableHTTPClientTransport(new URL(`${m.url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${await m.token('admin')}` } } })
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' })
  await client.connect(transport)
  t.teardown(async () => { await client.close().catch(() => {}) })
  const tool = (await client.listTools()).tools.find(x => x.name === 'apply_config')
  t.ok(tool, 'listed')
  t.match(tool?.inputSchema, { properties: { file: { type: 'object' }, dry_run: { type: 'boolean' }, prune: { type: 'boolean' } }, required: ['file'] })
  const file = { format_version: 1, policies: [{ name: 'gold', rate_limit: { requests: 10, per_seconds: 1 } }] }
  const text = (r: any) => JSON.parse(r.content[0].text)
  let r = await client.callTool({ name: 'apply_config', arguments: { file, dry_run: true } })
  t.same(text(r), { changes: [{ kind: 'policy', key: 'gold', action: 'create' }], applied: false, version: 0 })
  r = await client.callTool({ name: 'apply_config', arguments: { file } })
  t.match(text(r), { applied: true, version: 1 })
  t.match(m.events, [{ resource_kind: 'policy', operation: 'created' }], 'the event')
  const audit = await m.call('GET', '/api/v1/audit-logs?resource_kind=policy')
  t.match(audit.body.items, [{ source: 'mcp', action: 'create', path: '/api/v1/config/apply' }], 'audited as an MCP change')
  r = await client.callTool({ name: 'apply_config', arguments: { file: { format_version: 1, policies: [{ name: '' }] } } })
  t.equal(r.isError, true)
  t.match(text(r), { error: { code: 'validation_failed', details: [{ field: 'policies[0].name' }] } })
})
