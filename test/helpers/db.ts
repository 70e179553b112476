/**
 * Databases for tests: a fresh PostgreSQL database per call (dropped in
 * teardown) on the tests' server (test/helpers/services.ts), or a fresh
 * embedded data directory.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { pino } from 'pino'
import type { Config } from '../../src/main/config/config.js'
import { openStore, type Store } from '../../src/main/store/index.js'
import { requireService, TEST_DATABASE_URL } from './services.js'

/** A database on the tests' PostgreSQL server, to create and drop test databases from. */
export const ADMIN_URL = TEST_DATABASE_URL
export const silentLogger = pino({ level: 'silent' })

interface Teardown { teardown (fn: () => unknown): void }

/** Creates an empty PostgreSQL database; returns its URL. */
export async function createTestDatabase (t: Teardown): Promise<string> {
  const name = `gh_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: requireService(ADMIN_URL, 'PostgreSQL server') })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.end()
  })
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

export async function createTempDir (t: Teardown, prefix = 'gatehouse-test-'): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  t.teardown(async () => { await fs.rm(dir, { recursive: true, force: true }) })
  return dir
}

export type StoreKind = 'postgres' | 'embedded'
export const STORE_KINDS: StoreKind[] = ['postgres', 'embedded']

/** Store settings for a fresh database of the given kind. */
export async function storeConfig (t: Teardown, kind: StoreKind): Promise<Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DB_QUERY_TIMEOUT_MS'>> {
  const dataDir = await createTempDir(t)
  return {
    DATABASE_URL: kind === 'postgres' ? await createTestDatabase(t) : '',
    DATA_DIR: dataDir,
    DB_QUERY_TIMEOUT_MS: 10000
  }
}

/** Opens a fresh migrated store of the given kind, closed in teardown. */
export async function openTestStore (t: Teardown, kind: StoreKind): Promise<Store> {
  const store = await openStore(await storeConfig(t, kind), silentLogger)
  t.teardown(async () => { await store.close() })
  return store
}
