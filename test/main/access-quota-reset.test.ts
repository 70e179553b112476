/**
 * Quotas at the gateway across a period boundary: spent before midnight UTC
 * (or the month's end), available again right after, with one instance and
 * with two instances counting in Redis. The limiters take a clock the test moves.
 */
import t, { type Test } from 'tap'
import type { PolicySnapshot } from '../../src/main/access/policy-limits.js'
import type { ProfileSnapshot } from '../../src/main/access/profile-auth.js'
import { createMemoryLimiter } from '../../src/main/cache/memory-limiter.js'
import { createRedisLimiter } from '../../src/main/cache/redis-limiter.js'
import type { RateLimiter } from '../../src/main/cache/types.js'
import { profile, startAccessGateway } from '../helpers/access.js'
import { collection, proxy, startBackend } from '../helpers/gateway.js'
import { testRedis } from './cache/shared.js'

type Clock = { now: number }
type Limiters = (t: Test, clock: Clock) => Promise<RateLimiter[]>

const kinds: Array<[string, Limiters]> = [
  ['memory, one instance', async (_t, clock) => [createMemoryLimiter(() => clock.now)]],
  ['redis, two instances', async (t, clock) => {
    const a = await testRedis(t, 'quota-reset')
    const b = await testRedis(t, 'quota-reset')
    return [a, b].map(x => createRedisLimiter(x.redis, x.logger, { keyPrefix: a.prefix, now: () => clock.now }))
  }]
]

for (const [name, make] of kinds) {
  t.test(`quotas start afresh when their UTC period ends (${name})`, async t => {
    const backend = await startBackend(t)
    const api = collection({ base_path: '/metered', upstream_url: backend.url, auth_required: true })
    const profiles = new Map<string, ProfileSnapshot>([
      ['daily', profile({ id: 'daily', collection_ids: [api.id], policy_id: 'day3' })],
      ['monthly', profile({ id: 'monthly', collection_ids: [api.id], policy_id: 'month2' })]
    ])
    const policies = new Map<string, PolicySnapshot>([
      ['day3', { id: 'day3', status: 'enabled', rate_limit: null, quota: { requests: 3, period: 'day' } }],
      ['month2', { id: 'month2', status: 'enabled', rate_limit: { requests: 1000, per_seconds: 3600 }, quota: { requests: 2, period: 'month' } }]
    ])
    const clock = { now: Date.parse('2031-03-31T23:59:58.000Z') }
    const gateways = await Promise.all((await make(t, clock)).map(async l => {
      const g = await startAccessGateway(t, profiles, policies, l)
      g.gateway.setRoutes([api], [proxy(api, { path: '/x', target_path: '/x' })])
      return g
    }))
    let n = 0
    // Calls alternate between the instances (one with memory).
    const call = async (id: string) => {
      const g = gateways[n++ % gateways.length]! // an index modulo the length
      const res = await fetch(`${g.url}/metered/x`, { headers: { connection: 'close', 'x-client-id': 'acme', 'x-profile-id': id } })
      const text = await res.text()
      return { status: res.status, h: (k: string) => res.headers.get(k), body: text.startsWith('{') ? JSON.parse(text) : text }
    }

    const day = [await call('daily'), await call('daily'), await call('daily')]
    t.same(day.map(r => r.status), [200, 200, 200])
    t.same(day.map(r => r.h('ratelimit-remaining')), ['2', '1', '0'])
    t.same(day.map(r => r.h('ratelimit-reset')), ['2', '2', '2'], 'the quota resets at midnight UTC, 2 s away')
    let r = await call('daily')
    t.equal(r.status, 429, 'the daily quota is spent')
    t.match(r.body.error.message, /daily quota/)
    t.equal(r.h('retry-after'), '2')
    t.equal((await call('monthly')).status, 200)
    t.equal((await call('monthly')).status, 200)
    r = await call('monthly')
    t.equal(r.status, 429, 'the monthly quota is spent')
    t.match(r.body.error.message, /monthly quota/)
    t.equal(r.h('ratelimit-limit'), '2', 'the tighter counter (the quota) is reported')

    clock.now = Date.parse('2031-03-31T23:59:59.900Z')
    t.equal((await call('daily')).status, 429, 'still spent in the last moment of the day')

    clock.now = Date.parse('2031-04-01T00:00:00.500Z')
    r = await call('daily')
    t.equal(r.status, 200, 'a new day, a new quota')
    t.equal(r.h('ratelimit-remaining'), '2')
    t.equal(r.h('ratelimit-reset'), '86400')
    t.equal((await call('daily')).status, 200)
    t.equal((await call('daily')).status, 200)
    t.equal((await call('daily')).status, 429, 'and it is counted again')
    r = await call('monthly')
    t.equal(r.status, 200, 'a new month, a new monthly quota')
    t.equal(r.h('ratelimit-remaining'), '1')

    clock.now = Date.parse('2031-04-15T12:00:00.000Z')
    t.equal((await call('daily')).status, 200, 'another day')
    t.equal((await call('monthly')).status, 200)
    t.equal((await call('monthly')).status, 429, 'but the same month')
  })
}
