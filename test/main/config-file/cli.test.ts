/** `gatehouse dump` and `gatehouse diff` as CI runs them, against a running management listener. */
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import { startManagement } from '../../helpers/management.js'
import { createTempDir } from '../../helpers/db.js'
import { populate } from './populate.js'

const BIN = new URL('../../../bin/gatehouse.mjs', import.meta.url).pathname

/** Runs the command without blocking this process (the listener it calls lives here). */
function run (args: string[], env: Record<string, string>): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr })
    })
  })
}

t.test('gatehouse dump and diff', async t => {
  const m = await startManagement(t, 'embedded')
  await populate(t, m)
  const env = { GATEHOUSE_URL: m.url, GATEHOUSE_TOKEN: await m.token('editor') }
  const dir = await createTempDir(t)

  const dump = await run(['dump'], env)
  t.equal(dump.code, 0, dump.stderr)
  t.equal(dump.stdout, (await m.call('GET', '/api/v1/config', { headers: { accept: 'application/yaml' } })).body, 'dump prints the YAML file')
  const json = await run(['dump', '--json', '--url', m.url], { GATEHOUSE_TOKEN: env.GATEHOUSE_TOKEN })
  t.same(JSON.parse(json.stdout), parseYaml(dump.stdout), '--json and --url')

  const file = join(dir, 'gateway.yaml')
  await writeFile(file, dump.stdout)
  let r = await run(['diff', '-f', file], env)
  t.equal(r.code, 0, 'a fresh dump is no change')
  t.equal(r.stdout, '')

  const edited = parseYaml(dump.stdout)
  edited.policies[0].rate_limit.requests = 5
  edited.policies.push({ name: 'silver', description: '', status: 'enabled', rate_limit: null, quota: null })
  edited.collections = edited.collections.filter((c: any) => c.base_path !== '/billing')
  await writeFile(file, toYaml(edited))
  r = await run(['diff', '-f', file], env)
  t.equal(r.code, 2, 'changes: exit 2')
  t.same(r.stdout.trim().split('\n').sort(), ['create policy silver', 'update policy gold'])
  r = await run(['diff', '-f', file, '--prune'], env)
  t.equal(r.code, 2)
  t.same(r.stdout.trim().split('\n').sort(), ['create policy silver', 'delete collection /billing', 'delete proxy /billing GET /invoices/{id}', 'update policy gold'], '--prune lists what the file does not name')

  r = await run(['dump'], { ...env, GATEHOUSE_TOKEN: 'not-a-token' })
  t.equal(r.code, 1)
  t.match(r.stderr, /answered 401/)
  r = await run(['diff'], env)
  t.equal(r.code, 1)
  t.match(r.stderr, /-f <file> is required/)
})
