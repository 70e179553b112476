/** The request log's promise: no record lost on a clean shutdown, on either store. */
import path from 'node:path'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { openStore } from '../../../src/main/store/index.js'
import { RequestLogFiles } from '../../../src/main/observability/request-log-files.js'
import { createTempDir, createTestDatabase, silentLogger, STORE_KINDS } from '../../helpers/db.js'

for (const kind of STORE_KINDS) {
  t.test(`a clean shutdown writes every request log record still buffered (${kind})`, async t => {
    const config = loadConfig({
      GATEWAY_THREADS: '1',
      DATABASE_URL: kind === 'postgres' ? await createTestDatabase(t) : '', DATA_DIR: await createTempDir(t),
      PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent'
    })
    const s = await start(config, { logger: silentLogger })
    let closed = false
    t.teardown(async () => { if (!closed) await s.close() })
    const g = `http://127.0.0.1:${s.gatewayPort}`
    // 300 requests matching nothing (404s are logged too), then at once a shutdown: no flush timer has run for most.
    await Promise.all(Array.from({ length: 300 }, async (_, i) => { await (await fetch(`${g}/none/${i}`, { headers: { connection: 'close' } })).text() }))
    await s.close()
    closed = true
    if (kind === 'postgres') {
      const store = await openStore(config, silentLogger)
      t.teardown(() => store.close())
      const r = await store.query<{ n: number }>("SELECT count(*)::int AS n FROM request_logs WHERE path LIKE '/none/%'")
      t.equal(Number(r.rows[0]?.n), 300, 'every record reached the store')
    } else {
      const files = await RequestLogFiles.open(path.join(config.DATA_DIR, 'request-log'))
      t.teardown(() => files.close())
      const { items } = await files.list({ limit: 1000 }, {})
      t.equal(items.filter(r => r.path.startsWith('/none/')).length, 300, 'every record reached the request log files')
    }
  })
}
