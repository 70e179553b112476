/**
 * A fresh embedded store starts from a template instead of running initdb (PostgreSQL's cluster
 * creation, several seconds of WebAssembly, and it leaves PGlite's memory grown for good) and the
 * migrations: `npm run build` writes `dist/pglite-template/`, a closed cluster with the migrations
 * applied, once per PGlite version and set of migrations (scripts/pglite-template.mjs), and a
 * DATA_DIR without a cluster is copied from it. The migration runner still checks at start and
 * applies what the template lacks. Without the template, PGlite runs initdb as before.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'

export const TEMPLATE_NAME = 'pglite-template'

/**
 * PGlite's own start parameters, with a smaller buffer pool: the default 128 MB of shared buffers
 * is most of an idle embedded store's memory, and its tables (configuration, the request log's
 * recent rows) fit in far less.
 */
export const EMBEDDED_START_PARAMS: string[] = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

/** The template beside the compiled code (dist/) or, from the sources, in dist/ of the checkout. */
export function templateDir (): string | null {
  const here = path.dirname(fileURLToPath(import.meta.url))
  for (const candidate of [path.resolve(here, '../../..', TEMPLATE_NAME), path.resolve(here, '../../../dist', TEMPLATE_NAME)]) {
    if (fs.existsSync(path.join(candidate, 'PG_VERSION'))) return candidate
  }
  return null
}

/**
 * Copies the template into `dataDir` when it holds no cluster yet (through a temporary directory
 * beside it, so that a start cut off mid-copy leaves no half cluster). False when there was
 * nothing to do or no template.
 */
export async function seedFromTemplate (dataDir: string): Promise<boolean> {
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return false
  const template = templateDir()
  if (template === null) return false
  const tmp = `${dataDir}.seed-${process.pid}`
  await fs.promises.rm(tmp, { recursive: true, force: true })
  await fs.promises.cp(template, tmp, { recursive: true })
  const leftovers = fs.existsSync(dataDir) ? await fs.promises.readdir(dataDir) : []
  if (leftovers.length > 0) {
    // Not a cluster but not empty either: leave it to PGlite, as without a template.
    await fs.promises.rm(tmp, { recursive: true, force: true })
    return false
  }
  await fs.promises.rm(dataDir, { recursive: true, force: true })
  await fs.promises.rename(tmp, dataDir)
  return true
}
