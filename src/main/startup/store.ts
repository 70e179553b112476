/**
 * The store subsystem: the store (PostgreSQL or embedded), the shared cache (memory or Redis)
 * with the event hub that fans out over it, the secrets key, the request log's storage and the
 * quota counters' write-behind. Everything above it reads and writes through what it returns.
 */
import path from 'node:path'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { openStore, type Store } from '../store/index.js'
import { createSharedState, type SharedState } from '../cache/shared-state.js'
import { persistQuotas, type QuotaPersistence } from '../access/quota-persistence.js'
import { createEventHub, type EventHub } from '../events/hub.js'
import { loadSecretsKey } from '../credentials/secrets.js'
import type { ReadyReport } from '../gateway/index.js'
import { tableRequestLog, type RequestLogStore } from '../store/request-logs.js'
import { RequestLogFiles } from '../observability/request-log-files.js'
import { checkStoredSecrets, resealLegacySecrets } from './stored-secrets.js'
import type { Subsystem } from './subsystem.js'

export interface StoreSubsystem extends Subsystem {
  store: Store
  shared: SharedState
  hub: EventHub
  secretsKey: Buffer
  /** The request log: the store's table on PostgreSQL, files in DATA_DIR/request-log on the embedded store. */
  requestLogs: RequestLogStore
  /** /readyz of both listeners: the database, and Redis when CACHE_TYPE=redis. */
  readiness (): Promise<ReadyReport>
  /** Logs where the data lives (once the listeners are up). */
  announce (): void
}

export async function startStore (config: Readonly<Config>, logger: Logger, keyPrefix: string | undefined): Promise<StoreSubsystem> {
  const store = await openStore(config, logger)
  const shared = createSharedState({ config, logger, keyPrefix })
  const hub = createEventHub({ config, logger, redis: shared.redis, keyPrefix })
  const secretsKey = await loadSecretsKey({ secretsKey: config.SECRETS_KEY, dataDir: config.DATA_DIR })
  let requestLogs: RequestLogStore
  let quotas: QuotaPersistence | null = null
  try {
    await checkStoredSecrets(store, secretsKey, logger)
    await resealLegacySecrets(store, secretsKey, logger)
    // The embedded store's request log is kept in files beside it (cheaper per request than its rows).
    if (store.kind === 'embedded') {
      const files = await RequestLogFiles.open(path.join(config.DATA_DIR, 'request-log'))
      const moved = await files.takeOver(store)
      if (moved > 0) logger.info({ rows: moved }, 'request log: rows kept in the embedded store by an earlier version moved to its files')
      requestLogs = files
    } else {
      requestLogs = tableRequestLog(store)
    }
    // Without Redis, quota counters live in memory: written behind to the store, read back here.
    quotas = shared.quotaCounters === undefined ? null : await persistQuotas(shared.quotaCounters, store, logger, config.QUOTA_FLUSH_MS)
  } catch (err) {
    await Promise.allSettled([hub.close(), shared.close()])
    await store.close().catch(() => {})
    throw err
  }

  return {
    store,
    shared,
    hub,
    secretsKey,
    requestLogs,
    async readiness () {
      const checks: Record<string, string> = {}
      checks.database = await store.ping().then(() => 'ok', (err: Error) => `unreachable: ${err.message}`)
      if (config.CACHE_TYPE === 'redis' && shared.redis !== undefined) {
        checks.redis = await shared.redis.ping().then(() => 'ok', (err: Error) => `unreachable: ${err.message}`)
      }
      return { ok: Object.values(checks).every(v => v === 'ok'), checks }
    },
    announce () {
      logger.info({ store: store.kind, data_dir: store.kind === 'embedded' ? config.DATA_DIR : undefined, cache: config.CACHE_TYPE },
        `store: ${store.kind === 'embedded' ? `embedded (PGlite) in ${config.DATA_DIR}` : 'PostgreSQL'}; cache: ${config.CACHE_TYPE}`)
    },
    async close () {
      await requestLogs.close?.().catch(() => {})
      // After the gateway stopped admitting: the last quota hits are written before the store closes.
      await quotas?.close().catch(err => { logger.warn({ err: (err as Error).message }, 'quota counters could not be written at stop') })
      await Promise.allSettled([hub.close(), shared.close()])
      await store.close()
    }
  }
}
