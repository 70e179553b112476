// Whether dist/ was built from the sources as they are, so `npm start` rebuilds only when it must.
//   node scripts/build-stamp.mjs write     after a build: records a digest of the build's inputs
//   node scripts/build-stamp.mjs current   exit 0 when dist/ holds every output and the digest matches
// The digest covers the contents of every input file (the server's and the UIs' sources, the
// template script, package.json, the lockfile, the TypeScript configs), not their times: a checkout,
// a copy or an editor that keeps times cannot make an old build look current.
// `--root <dir>` works on another tree (tests).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const args = process.argv.slice(2)
const at = args.indexOf('--root')
const root = at >= 0 ? path.resolve(args[at + 1]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const mode = args.find((_a, i) => at < 0 || (i !== at && i !== at + 1))

const INPUTS = ['src', 'console', 'scripts/pglite-template.mjs', 'package.json', 'package-lock.json', 'tsconfig.json']
const OUTPUTS = ['dist/src/main/index.js', 'dist/ui/console/index.html', 'dist/ui/portal/index.html', 'dist/pglite-template.version']
const STAMP = path.join(root, 'dist', '.build-inputs')

function files (rel) {
  const full = path.join(root, rel)
  const st = fs.statSync(full, { throwIfNoEntry: false })
  if (st === undefined) return []
  if (!st.isDirectory()) return [rel]
  return fs.readdirSync(full, { withFileTypes: true })
    .filter(e => e.name !== 'node_modules' && !e.name.startsWith('.'))
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    .flatMap(e => files(path.join(rel, e.name)))
}

function digest () {
  const h = createHash('sha256')
  for (const rel of INPUTS.flatMap(files)) {
    h.update(`${rel.split(path.sep).join('/')}\0`)
    h.update(fs.readFileSync(path.join(root, rel)))
    h.update('\0')
  }
  return h.digest('hex')
}

if (mode === 'write') {
  fs.mkdirSync(path.dirname(STAMP), { recursive: true })
  fs.writeFileSync(STAMP, digest() + '\n')
} else if (mode === 'current') {
  const missing = OUTPUTS.filter(o => !fs.existsSync(path.join(root, o)))
  let stamp = ''
  try { stamp = fs.readFileSync(STAMP, 'utf8').trim() } catch {}
  if (missing.length === 0 && stamp !== '' && stamp === digest()) {
    console.log('build: dist/ is current (sources unchanged since the last build)')
    process.exit(0)
  }
  console.log(missing.length > 0 ? `build: ${missing[0]} is missing; building` : 'build: sources changed since the last build; building')
  process.exit(1)
} else {
  console.error('usage: node scripts/build-stamp.mjs write|current [--root <dir>]')
  process.exit(2)
}
