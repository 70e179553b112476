// Writes dist/pglite-template/: an embedded cluster with the schema migrations applied (PGlite's
// initdb and the migrations, run once here, then closed cleanly) that a fresh DATA_DIR is copied
// from at start, instead of running them there (see src/main/store/embedded-template.ts). Runs after
// tsc (it applies the compiled migrations); skipped when the template for this PGlite version and
// these migrations exists.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { PGlite } from '@electric-sql/pglite'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const out = path.join(root, 'dist', 'pglite-template')
const stamp = out + '.version'
const require = createRequire(import.meta.url)
const pgliteVersion = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')).version
const { MIGRATIONS } = await import(path.join(root, 'dist/src/main/store/migrations/index.js'))
const { migrate } = await import(path.join(root, 'dist/src/main/store/migrate.js'))
const { EMBEDDED_START_PARAMS } = await import(path.join(root, 'dist/src/main/store/embedded-template.js'))
const migrationsHash = createHash('sha256').update(JSON.stringify(MIGRATIONS)).digest('hex').slice(0, 16)
const version = `${pgliteVersion} ${migrationsHash}`
if (fs.existsSync(out) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === version) process.exit(0)

// The service's own migration runner, over PGlite directly (the part of the store interface it uses).
const asStore = db => ({
  kind: 'embedded',
  tx: async fn => await db.transaction(async t => await fn({ query: (sql, params) => t.query(sql, params), exec: sql => t.exec(sql) }))
})
const quiet = { info () {}, warn () {}, error () {}, debug () {} }

const started = performance.now()
const tmp = `${out}.tmp-${process.pid}`
fs.rmSync(tmp, { recursive: true, force: true })
fs.rmSync(stamp, { force: true })
try {
  const db = await PGlite.create(tmp, { startParams: EMBEDDED_START_PARAMS })
  await migrate(asStore(db), quiet)
  await db.close()
  fs.rmSync(out, { recursive: true, force: true })
  fs.renameSync(tmp, out)
  fs.writeFileSync(stamp, version)
  console.log(`embedded store template written to dist/pglite-template in ${Math.round(performance.now() - started)} ms (PGlite ${pgliteVersion}, ${MIGRATIONS.length} migrations)`)
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}
