/**
 * `gatehouse dump`, `gatehouse diff -f FILE` and `gatehouse apply -f FILE`: the gateway's
 * configuration file (docs/config-as-code.md) against a running service, for git and CI.
 *   dump: prints GET /api/v1/config (YAML, or JSON with --json); exit 0, 1 on an error.
 *   diff: prints what applying FILE would change; exit 0 nothing, 2 something, 1 an error.
 *   apply: resolves the file's ${NAME} references from this environment, then POST
 *          /api/v1/config/apply; exit 0 done (or nothing to do), 2 changes pending (--dry-run),
 *          3 the service refused the file (invalid, stale, CONFIG_FILE), 1 any other error.
 * The service's address and a token come from --url/--token or GATEHOUSE_URL/GATEHOUSE_TOKEN.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { diffConfig, type ConfigChange } from '../config-file/diff.js'
import type { ConfigFile } from '../config-file/dump.js'
import { resolveReferences } from '../config-file/references.js'

const USAGE = `usage: gatehouse dump [--json] [--url <management url>] [--token <token>]
       gatehouse diff -f <file> [--prune] [--url <management url>] [--token <token>]
       gatehouse apply -f <file> [--prune] [--dry-run] [--url <management url>] [--token <token>]

dump prints the running gateway's whole configuration (YAML; JSON with --json).
diff prints what applying the file would change, one line per resource
("create collection /orders"); with --prune also what the file does not name
(delete). Exit code: 0 no change, 2 changes, 1 error.
apply makes the gateway match the file in one transaction (all or nothing) and prints
each change; --prune also deletes what the file does not name; --dry-run changes
nothing. \${NAME} references in credential configs are read from this environment.
Exit code: 0 applied (or nothing to change), 2 changes pending (--dry-run only),
3 the service refused the file (every problem is printed; nothing changed), 1 error.
The service: --url or GATEHOUSE_URL (default http://127.0.0.1:8081); a token (editor
or admin; admin for apply): --token or GATEHOUSE_TOKEN.
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
let values: { json?: boolean, file?: string, prune?: boolean, 'dry-run'?: boolean, url?: string, token?: string, help?: boolean }
try {
  values = parseArgs({ args: argv, options: { json: { type: 'boolean' }, file: { type: 'string', short: 'f' }, prune: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, url: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values
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
} else if (command === 'apply') {
  if (values.file === undefined) fail(`-f <file> is required.\n\n${USAGE}`)
  await apply(readFile(values.file), values.prune === true, values['dry-run'] === true)
} else {
  if (values.file === undefined) fail(`-f <file> is required.\n\n${USAGE}`)
  const wanted = readFile(values.file)
  const current = JSON.parse(await fetchConfig(base, token, 'application/json')) as ConfigFile
  const changes = diffConfig(current, wanted, { prune: values.prune === true })
  for (const c of changes) process.stdout.write(`${c.action} ${c.kind} ${c.key}\n`)
  process.exit(changes.length === 0 ? 0 : 2)
}

/** Resolves the file's references here, sends it, prints the changes; exits with the CI code. */
async function apply (file: ConfigFile, prune: boolean, dryRun: boolean): Promise<never> {
  const { file: resolved, missing } = resolveReferences(file, process.env)
  if (missing.length > 0) {
    fail(`the file refers to environment variables that are not set here, so nothing was sent:\n${missing.map(m => `  ${m.field}: \${${m.name}}`).join('\n')}`)
  }
  const url = new URL('/api/v1/config/apply', base)
  if (dryRun) url.searchParams.set('dry_run', 'true')
  if (prune) url.searchParams.set('prune', 'true')
  let res: Response
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(resolved) })
  } catch (err) {
    fail(`cannot reach ${base}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`)
  }
  const text = await res.text()
  let body: { changes?: ConfigChange[], applied?: boolean, version?: number, error?: { message?: string, details?: Array<{ field?: string, message: string }> } } = {}
  try { body = JSON.parse(text) } catch {}
  if (!res.ok) {
    const details = (body.error?.details ?? []).map(d => `  ${d.field ?? ''}: ${d.message}`).join('\n')
    // The file itself was refused (invalid, stale, or the service runs from CONFIG_FILE): 3, so CI can tell it from an outage.
    const refused = res.status === 400 || res.status === 409 || res.status === 412 || res.status === 415 || res.status === 413
    fail(`${base} answered ${res.status}: ${body.error?.message ?? text}${details !== '' ? `\n${details}` : ''}`, refused ? 3 : 1)
  }
  const changes = body.changes ?? []
  for (const c of changes) process.stdout.write(`${c.action} ${c.kind} ${c.key}\n`)
  process.stderr.write(dryRun
    ? `gatehouse: dry run, nothing changed: ${changes.length === 0 ? 'the gateway matches the file' : `${changes.length} change${changes.length === 1 ? '' : 's'} pending`}.\n`
    : changes.length === 0 ? 'gatehouse: the gateway already matches the file; nothing changed.\n' : `gatehouse: applied ${changes.length} change${changes.length === 1 ? '' : 's'} (configuration version ${String(body.version)}).\n`)
  process.exit(dryRun && changes.length > 0 ? 2 : 0)
}
