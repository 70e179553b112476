/**
 * The management MCP through the MCP Inspector's command-line mode, as an operator would try it:
 * list tools, call one that creates a record, read a prompt, and a call refused by role; and the
 * docs' Inspector commands pin the release tested here.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

const require = createRequire(import.meta.url)
const CLI = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'cli', 'build', 'cli.js')

function inspector (url: string, token: string, args: string[]): Promise<{ code: number, out: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [CLI, '--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? 1, out: stdout + stderr })
    })
  })
}

// Each CLI run starts a fresh Node process that loads the inspector: slow on a loaded machine.
t.setTimeout(600_000)

t.test('MCP Inspector CLI against the management MCP', async t => {
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const url = `http://127.0.0.1:${s.managementPort}/api/v1/mcp`
  const admin = await s.issueToken!('alice', 'admin')
  const viewer = await s.issueToken!('victor', 'viewer')

  const list = await inspector(url, admin, ['--method', 'tools/list'])
  t.equal(list.code, 0, list.out.slice(0, 500))
  const names = (JSON.parse(list.out).tools as Array<{ name: string }>).map(x => x.name)
  t.ok(names.length >= 57, `${names.length} tools`)
  t.ok(names.includes('workflow_list_nodes') && names.includes('restore_workflow_version'))

  const created = await inspector(url, admin, ['--method', 'tools/call', '--tool-name', 'create_collection', '--tool-arg', 'name=orders', 'base_path=/orders', 'upstream_url=http://127.0.0.1:9'])
  t.equal(created.code, 0, created.out.slice(0, 500))
  const result = JSON.parse(created.out)
  t.notOk(result.isError)
  t.match(JSON.parse(result.content[0].text), { name: 'orders', base_path: '/orders' })

  const prompt = await inspector(url, admin, ['--method', 'prompts/get', '--prompt-name', 'build_workflow', '--prompt-args', 'proxy_id=p1', 'goal=echo the body'])
  t.equal(prompt.code, 0, prompt.out.slice(0, 500))
  t.match(JSON.parse(prompt.out).messages[0].content.text, 'workflow_list_nodes')

  const refused = await inspector(url, viewer, ['--method', 'tools/call', '--tool-name', 'create_collection', '--tool-arg', 'name=x', 'base_path=/x', 'upstream_url=http://127.0.0.1:9'])
  const refusedResult = JSON.parse(refused.out)
  t.equal(refusedResult.isError, true)
  t.match(JSON.parse(refusedResult.content[0].text), { error: { code: 'forbidden' } })
})

t.test('every Inspector command in the docs pins the release the tests run', async t => {
  const root = path.resolve(import.meta.dirname, '../../..')
  const version = (require('@modelcontextprotocol/inspector/package.json') as { version: string }).version
  const files = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter(f => f.endsWith('.md')).map(f => `docs/${f}`)]
  let commands = 0
  for (const file of files) {
    for (const m of fs.readFileSync(path.join(root, file), 'utf8').matchAll(/^\s*npx\b.*?@modelcontextprotocol\/inspector(\S*)/gm)) {
      commands++
      t.equal(m[1], `@${version}`, `${file}: ${m[0].trim()}`)
    }
  }
  t.ok(commands >= 3, `${commands} commands checked`)
})
