/**
 * The gateway while Redis is down: calls keep flowing under each instance's share
 * of the limit (no 5xx, and together no more than the limit), the outage is logged once per instance, and quota counts made
 * meanwhile are in Redis again when it returns, so both instances see them.
 */
import t from 'tap'
import type { PolicySnapshot } from '../../src/main/access/policy-limits.js'
import type { ProfileSnapshot } from '../../src/main/access/profile-auth.js'
import { createRedis, whenRedisReady } from '../../src/main/cache/redis.js'
import { createRedisLimiter } from '../../src/main/cache/redis-limiter.js'
import { profile, startAccessGateway } from '../helpers/access.js'
import { collection, proxy, startBackend } from '../helpers/gateway.js'
import { eventually, recordingLogger, uniquePrefix } from './cache/shared.js'
import { startRedisServer } from './cache/redis-server.js'

t.test('Redis down at the gateway: calls flow under a local limit, logged once; quotas recover their count', async t => {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const backend = await startBackend(t)
  const api = collection({ base_path: '/paid', upstream_url: backend.url, auth_required: true })
  const profiles = new Map<string, ProfileSnapshot>([
    ['rate', profile({ id: 'rate', collection_ids: [api.id], policy_id: 'rate' })],
    ['quota', profile({ id: 'quota', collection_ids: [api.id], policy_id: 'quota' })]
  ])
  const policies = new Map<string, PolicySnapshot>([
    ['rate', { id: 'rate', status: 'enabled', rate_limit: { requests: 3, per_seconds: 300 }, quota: null }],
    ['quota', { id: 'quota', status: 'enabled', rate_limit: null, quota: { requests: 6, period: 'month' } }]
  ])
  const prefix = uniquePrefix('gw-outage')
  const logs = [recordingLogger(), recordingLogger()]
  const gateways = await Promise.all(logs.map(async ({ logger }) => {
    const redis = createRedis({ REDIS_URL: server.url }, logger)
    t.teardown(() => redis.disconnect())
    await whenRedisReady(redis)
    const g = await startAccessGateway(t, profiles, policies, createRedisLimiter(redis, logger, { keyPrefix: prefix, probeIntervalMs: 50 }))
    g.gateway.setRoutes([api], [proxy(api, { path: '/x', target_path: '/x' })])
    return g
  }))
  // Each limiter learns from its heartbeat (every second) that two instances share the limits.
  await new Promise(resolve => setTimeout(resolve, 1500))
  const call = async (i: number, id: string) => {
    const res = await fetch(`${gateways[i]!.url}/paid/x`, { headers: { connection: 'close', 'x-client-id': 'acme', 'x-profile-id': id } })
    await res.text()
    return { status: res.status, remaining: res.headers.get('ratelimit-remaining') }
  }

  // Two quota hits on each instance while Redis is up: 4 of 6 spent, shared.
  for (const i of [0, 1, 0, 1]) t.equal((await call(i, 'quota')).status, 200)
  t.equal((await call(0, 'quota')).remaining, '1', 'both instances count in Redis')
  await server.save()
  await server.stop()

  // Redis is down: instance 0 goes on from the last count Redis gave it (5): of the one left, its share (at least one) fits there.
  const during = [await call(0, 'quota'), await call(0, 'quota')]
  t.same(during.map(r => r.status), [200, 429], 'the quota is enforced locally, never a 5xx')
  // A rate limit of 3 shared by two instances: each admits floor(3 / 2) = 1 meanwhile.
  const rate = [await call(0, 'rate'), await call(0, 'rate'), await call(0, 'rate')]
  t.same(rate.map(r => r.status), [200, 429, 429], 'each instance enforces its share of the rate limit')
  t.same(rate.map(r => r.remaining), ['0', '0', '0'])
  const other = [await call(1, 'rate'), await call(1, 'rate')]
  t.same(other.map(r => r.status), [200, 429], 'the other instance its own share: together within the limit')
  for (const [i, l] of logs.entries()) {
    t.equal(l.lines.filter(x => x.component === 'rate-limits').length, 1, `instance ${i} logs the outage once`)
  }

  // Redis returns with the 5 hits it had saved; instance 0 adds the one it admitted meanwhile.
  await server.start()
  const recovered = (l: typeof logs[number]) => l.lines.some(x => x.component === 'rate-limits' && String(x.msg).includes('again'))
  t.ok(await eventually(() => logs.every(recovered)), 'both instances log that Redis is back')
  const after = await call(1, 'quota')
  t.equal(after.status, 429, 'the other instance, which had seen 4, now sees all 6 spent: the outage hit was added back')
  t.equal(after.remaining, '0')
  t.equal((await call(0, 'quota')).status, 429)
})
