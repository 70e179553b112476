/**
 * A fresh embedded store is copied from the build's template (a cluster with every migration
 * applied) instead of running initdb and the migrations at start; a data directory that already
 * holds a cluster, or holds something else, is never overwritten.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createEmbeddedStore } from '../../../src/main/store/embedded.js'
import { seedFromTemplate, templateDir } from '../../../src/main/store/embedded-template.js'
import { migrate } from '../../../src/main/store/migrate.js'
import { MIGRATIONS } from '../../../src/main/store/migrations/index.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.test('the build wrote the template, and a fresh data directory starts from it with every migration applied', async t => {
  t.ok(templateDir(), 'dist/pglite-template exists (npm run build writes it)')
  const dir = path.join(await createTempDir(t), 'db')
  t.equal(await seedFromTemplate(dir), true, 'the fresh directory was seeded')
  t.ok(fs.existsSync(path.join(dir, 'PG_VERSION')))
  t.notOk(fs.readdirSync(path.dirname(dir)).some(f => f.includes('.seed-')), 'no temporary copy is left beside it')

  const store = await createEmbeddedStore(dir)
  t.teardown(async () => { await store.close() })
  const { rows } = await store.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
  t.same(rows.map(r => Number(r.version)), MIGRATIONS.map(m => m.version).sort((a, b) => a - b), 'the template holds every migration')
  t.same(await migrate(store, silentLogger), [], 'nothing is left to apply at start')
  await store.query('INSERT INTO collections (id, name, base_path, upstream_url) VALUES ($1, $2, $3, $4)', ['c1', 'orders', '/orders', 'http://127.0.0.1:9/'])
  t.equal(await seedFromTemplate(dir), false, 'a directory with a cluster is left alone')
  t.equal((await store.query('SELECT count(*)::int AS n FROM collections')).rows[0].n, 1, 'its data is still there')
})

t.test('a data directory holding something other than a cluster is not replaced', async t => {
  const dir = path.join(await createTempDir(t), 'db')
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine')
  t.equal(await seedFromTemplate(dir), false)
  t.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'mine')
  t.same(fs.readdirSync(path.dirname(dir)), ['db'], 'no temporary copy is left beside it')
})
