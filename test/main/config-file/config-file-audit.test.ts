/**
 * The changes of loading CONFIG_FILE, at start and on reload (SIGHUP calls the same reload), are
 * audited with their own source, `config_file`, and the actor `CONFIG_FILE`: on both stores.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { stringify as toYaml } from 'yaml'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger, storeConfig, STORE_KINDS } from '../../helpers/db.js'

const file = (policies: string[]) => ({ format_version: 1, policies: policies.map(name => ({ name, rate_limit: { requests: 100, per_seconds: 60 } })) })

for (const kind of STORE_KINDS) {
  t.test(`CONFIG_FILE changes are audited with the source config_file (${kind})`, async t => {
    const store = await storeConfig(t, kind)
    const path = join(await createTempDir(t), 'gateway.yaml')
    await writeFile(path, toYaml(file(['gold'])))
    const s = await start(loadConfig({
      GATEWAY_THREADS: '1',
      DATABASE_URL: store.DATABASE_URL, DATA_DIR: store.DATA_DIR, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', CONFIG_FILE: path
    }), { logger: silentLogger })
    t.teardown(() => s.close())
    const token = await s.issueToken!('alice', 'viewer')
    const audit = async (query: string) => {
      const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/audit-logs?${query}`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })
      return { status: r.status, body: await r.json() as any }
    }

    let r = await audit('source=config_file&order=asc')
    t.equal(r.status, 200)
    t.match(r.body.items, [{ source: 'config_file', actor_sub: 'CONFIG_FILE', action: 'create', resource_kind: 'policy' }], 'the load at start')
    t.equal(r.body.items.length, 1)

    // The file edited and loaded again (what SIGHUP does).
    await writeFile(path, toYaml(file(['silver'])))
    await s.reloadConfigFile!()
    r = await audit('source=config_file&order=asc')
    t.same(r.body.items.map((e: any) => [e.action, e.source, e.actor_sub]), [
      ['create', 'config_file', 'CONFIG_FILE'], ['create', 'config_file', 'CONFIG_FILE'], ['delete', 'config_file', 'CONFIG_FILE']
    ], 'the reload: silver created, gold pruned')
    t.same((await audit('source=rest')).body.items, [], 'none of it is recorded as a REST change')
  })
}
