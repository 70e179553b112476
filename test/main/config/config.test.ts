import t from 'tap'
import { loadConfig, ConfigError, gatewayThreadCount, autoThreads } from '../../../src/main/config/config.js'

t.test('defaults from CONVENTIONS.md when nothing is set', async t => {
  const c = loadConfig({})
  t.equal(c.PORT, 8080)
  t.equal(c.HOST, '0.0.0.0')
  t.equal(c.MANAGEMENT_PORT, 8081)
  t.equal(c.MANAGEMENT_HOST, '127.0.0.1')
  t.equal(c.MANAGEMENT_MCP_PATH, '/mcp')
  t.equal(c.CACHE_TYPE, 'memory')
  t.equal(c.REDIS_URL, 'redis://127.0.0.1:6379')
  t.equal(c.DATABASE_URL, '')
  t.ok(c.WORKERS >= 1)
  t.same(c.OUTBOUND_ALLOWLIST, [])
  t.ok(Object.isFrozen(c))
})

t.test('values are coerced from strings', async t => {
  const c = loadConfig({ PORT: '9000', WORKERS: '3', OUTBOUND_ALLOWLIST: 'example.test, 10.0.0.0/8 ,', CACHE_TYPE: 'redis' })
  t.equal(c.PORT, 9000)
  t.equal(c.WORKERS, 3)
  t.same(c.OUTBOUND_ALLOWLIST, ['example.test', '10.0.0.0/8'])
  t.equal(c.CACHE_TYPE, 'redis')
})

t.test('every bad variable is reported on its own line naming it', async t => {
  try {
    loadConfig({ PORT: 'eighty', CACHE_TYPE: 'memcached', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' })
    t.fail('should throw')
  } catch (err) {
    t.ok(err instanceof ConfigError)
    const lines = (err as ConfigError).lines
    t.equal(lines.length, 4)
    t.match(lines.find(l => l.startsWith('PORT=')), /expected a port number/)
    t.match(lines.find(l => l.startsWith('CACHE_TYPE=')), /memory or redis/)
    t.match(lines.find(l => l.startsWith('DATABASE_URL=')), /postgres:\/\//)
    t.match(lines.find(l => l.startsWith('LOG_LEVEL=')), /fatal, error/)
  }
})

t.test('GATEWAY_THREADS=auto, the default, is one gateway event loop per core, as nginx\'s worker_processes auto', async t => {
  t.equal(loadConfig({}).GATEWAY_THREADS, autoThreads(), 'unset is auto')
  t.equal(loadConfig({ GATEWAY_THREADS: 'auto' }).GATEWAY_THREADS, autoThreads())
  t.equal(loadConfig({ GATEWAY_THREADS: 'AUTO' }).GATEWAY_THREADS, autoThreads())
  t.equal(loadConfig({ GATEWAY_THREADS: '3' }).GATEWAY_THREADS, 3)
  t.equal(loadConfig({ GATEWAY_THREADS: '1' }).GATEWAY_THREADS, 1)
  t.equal(gatewayThreadCount(loadConfig({ GATEWAY_SERVER: 'node' })), 1, 'auto with node:http is one gateway thread')
  t.equal(gatewayThreadCount(loadConfig({ GATEWAY_SERVER: 'node', GATEWAY_THREADS: '4' })), 1, 'node:http cannot share its port across threads')
  t.equal(gatewayThreadCount(loadConfig({})), autoThreads())
  t.throws(() => loadConfig({ GATEWAY_THREADS: 'many' }), { message: /GATEWAY_THREADS="many" is invalid: expected an integer 1-256 or auto/ })
})

t.test('EMBEDDED_STORE_OPTIMIZE is off unless set to on', async t => {
  t.equal(loadConfig({}).EMBEDDED_STORE_OPTIMIZE, 'off')
  t.equal(loadConfig({ EMBEDDED_STORE_OPTIMIZE: 'on' }).EMBEDDED_STORE_OPTIMIZE, 'on')
  t.throws(() => loadConfig({ EMBEDDED_STORE_OPTIMIZE: 'yes' }), { message: /EMBEDDED_STORE_OPTIMIZE="yes" is invalid: expected off .* or on/ })
})

t.test('GATEWAY_THREADS=auto takes a container\'s CPU limit (cgroup), rounded down', async t => {
  const os = await import('node:os')
  const fs = await import('node:fs/promises')
  const path = await import('node:path')
  const cores = Math.min(256, os.availableParallelism())
  const root = async (files: Record<string, string>) => {
    const dir = t.testdir()
    for (const [f, text] of Object.entries(files)) { await fs.mkdir(path.dirname(path.join(dir, f)), { recursive: true }); await fs.writeFile(path.join(dir, f), text) }
    return dir
  }
  t.equal(autoThreads(await root({ 'cpu.max': 'max 100000\n' })), cores, 'cgroup v2 without a limit: every core')
  t.equal(autoThreads(await root({ 'cpu.max': '50000 100000\n' })), 1, 'half a core: one thread')
  t.equal(autoThreads(await root({ 'cpu.max': `${250000 * 256} 100000\n` })), cores, 'a limit above the cores: the cores')
  t.equal(autoThreads(await root({ 'cpu.max': '100000 100000\n' })), 1, 'one core')
  t.equal(autoThreads(await root({ 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' })), cores, 'cgroup v1 without a limit')
  t.equal(autoThreads(await root({ 'cpu,cpuacct/cpu.cfs_quota_us': '100000\n', 'cpu,cpuacct/cpu.cfs_period_us': '100000\n' })), 1, 'cgroup v1, one core')
  t.equal(autoThreads(await root({})), cores, 'no cgroup files: every core')
})
