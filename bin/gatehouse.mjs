#!/usr/bin/env node
/**
 * The `gatehouse` command: `gatehouse start`, `gatehouse token`, `gatehouse dump|diff|apply`, `gatehouse --help`,
 * `gatehouse --version`. It runs the compiled service (dist/), building it once when
 * dist/ is missing, so a token costs no rebuild. Settings come from the environment
 * (see README.md, "Configuration").
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const ENTRY = new URL('../dist/src/main/index.js', import.meta.url)
const TOKEN = new URL('../dist/src/main/cli/token.js', import.meta.url)
const CONFIG = new URL('../dist/src/main/cli/config.js', import.meta.url)

const HELP = `gatehouse ${pkg.version}: API gateway with a management API, live change stream, workflows and MCP endpoints

Usage:
  gatehouse start            start the service (gateway on PORT, management API on MANAGEMENT_PORT)
  gatehouse token --sub <subject> [--role viewer|editor|admin] [--ttl <seconds>] [--url]
                             print a management token from the built-in local issuer
                             (run it with the server's DATA_DIR: the key is kept there)
  gatehouse dump [--json]    print the running gateway's configuration file (GATEHOUSE_URL, GATEHOUSE_TOKEN)
  gatehouse diff -f <file> [--prune]
                             what applying the file would change; exit 0 nothing, 2 changes
  gatehouse apply -f <file> [--prune] [--dry-run]
                             make the gateway match the file (one transaction; admin token);
                             exit 0 done, 2 changes pending (--dry-run), 3 file refused, 1 error
  gatehouse <command> --help help for one command
  gatehouse --version        print the version

Settings are environment variables (PORT, MANAGEMENT_PORT, DATABASE_URL, DATA_DIR, CACHE_TYPE,
REDIS_URL, LOG_LEVEL, ...): see README.md, "Configuration".
With npm: npm start, npm run token -- --sub alice --role admin.
`

const [command, ...rest] = process.argv.slice(2)
if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(HELP)
  process.exit(0)
}
if (command === '--version' || command === '-v' || command === 'version') {
  process.stdout.write(`${pkg.version}\n`)
  process.exit(0)
}
const CONFIG_COMMANDS = new Set(['dump', 'diff', 'apply'])
if (command !== 'start' && command !== 'token' && !CONFIG_COMMANDS.has(command)) {
  process.stderr.write(`gatehouse: unknown command '${command}'.\n\n${HELP}`)
  process.exit(2)
}
if (!existsSync(ENTRY) || !existsSync(TOKEN) || !existsSync(CONFIG)) {
  process.stderr.write('gatehouse: building the service once (npm run build)...\n')
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
}
// The configuration commands read their command name; the others' parsers see only their arguments.
if (CONFIG_COMMANDS.has(command)) await import(CONFIG.href)
else {
  process.argv.splice(2, 1)
  await import(command === 'start' ? ENTRY.href : TOKEN.href)
}
