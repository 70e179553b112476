/**
 * `gatehouse dump` and `gatehouse diff -f FILE`: the gateway's configuration file
 * (docs/config-as-code.md) against a running service, for git and CI.
 *   dump: prints GET /api/v1/config (YAML, or JSON with --json); exit 0, 1 on an error.
 *   diff: prints what applying FILE would change; exit 0 nothing, 2 something, 1 an error.
 * The service's address and a token come from --url/--token or GATEHOUSE_URL/GATEHOUSE_TOKEN.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { diffConfig } from '../config-file/diff.js'
import type { ConfigFile } from '../config-file/dump.js'

const USAGE = `usage: gatehouse dump [--json] [--url <management url>] [--token <token>]
       gatehouse diff -f <file> [--prune] [--url <management url>] [--token <token>]

dump prints the running gateway's whole configuration (YAML; JSON with --json).
diff prints what applying the file would change, one line per resource
("create collection /orders"); with --prune also what the file does not name
(delete). Exit code: 0 no change, 2 changes, 1 error.
The service: --url or GATEHOUSE_URL (default http://127.0.0.1:8081); a token of role
editor or admin: --token or GATEHOUSE_TOKEN.
`

function fail (message: string, code = 1): never {
  process.stderr.write(`gatehouse: ${message}\n`)
  process.exit(code)
}

async function fetchConfig (base: string, token: string, accept: string): Promise<string> {
  let res: Response
  try {
    res = await fetch(new URL('/api/v1/config', base), { headers: { accept, authorization: `Bearer ${token}` } })
  } catch (err) {
    fail(`cannot reach ${base}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`)
  }
  const text = await res.text()
  if (!res.ok) {
    let message = text
    try { message = JSON.parse(text).error.message } catch {}
    fail(`${base} answered ${res.status}: ${message}`)
  }
  return text
}

function readFile (path: string): ConfigFile {
  let text: string
  try { text = readFileSync(path, 'utf8') } catch (err) { fail(`cannot read ${path}: ${(err as Error).message}`) }
  let file: unknown
  // YAML is a superset of JSON: one parser reads both.
  try { file = parseYaml(text) } catch (err) { fail(`${path} is not valid YAML or JSON: ${(err as Error).message}`) }
  if (typeof file !== 'object' || file === null || (file as { format_version?: unknown }).format_version !== 1) fail(`${path} is not a Gatehouse configuration file (format_version: 1).`)
  return file as ConfigFile
}

const [command, ...argv] = process.argv.slice(2)
let values: { json?: boolean, file?: string, prune?: boolean, url?: string, token?: string, help?: boolean }
try {
  values = parseArgs({ args: argv, options: { json: { type: 'boolean' }, file: { type: 'string', short: 'f' }, prune: { type: 'boolean' }, url: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values
} catch (err) {
  fail(`${(err as Error).message}\n\n${USAGE}`)
}
if (values.help === true) { process.stdout.write(USAGE); process.exit(0) }
const base = values.url ?? process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:8081'
const token = values.token ?? process.env.GATEHOUSE_TOKEN ?? ''
if (token === '') fail(`a token is required: --token or GATEHOUSE_TOKEN.\n\n${USAGE}`)

if (command === 'dump') {
  process.stdout.write(await fetchConfig(base, token, values.json === true ? 'application/json' : 'application/yaml'))
  if (values.json === true) process.stdout.write('\n')
} else {
  if (values.file === undefined) fail(`-f <file> is required.\n\n${USAGE}`)
  const wanted = readFile(values.file)
  const current = JSON.parse(await fetchConfig(base, token, 'application/json')) as ConfigFile
  const changes = diffConfig(current, wanted, { prune: values.prune === true })
  for (const c of changes) process.stdout.write(`${c.action} ${c.kind} ${c.key}\n`)
  process.exit(changes.length === 0 ? 0 : 2)
}
