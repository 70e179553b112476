/** Gateway access fixtures: profile snapshots and a gateway serving them on 127.0.0.1. */
import type { ProfileSnapshot } from '../../src/main/access/profile-auth.js'
import type { PolicySnapshot } from '../../src/main/access/policy-limits.js'
import type { RateLimiter } from '../../src/main/cache/types.js'
import { loadConfig } from '../../src/main/config/config.js'
import { createGateway, type Gateway } from '../../src/main/gateway/index.js'
import { silentLogger } from './db.js'
import { GATEWAY_SERVER } from './gateway.js'

interface T { teardown (fn: () => unknown): void }

export const profile = (over: Partial<ProfileSnapshot>): ProfileSnapshot => ({
  id: 'p', version: 1, client_id: 'acme', client_status: 'active', auth_type: 'none', api_key_hash: null, jwt_secret: null,
  oidc: null, mtls_fingerprint: null, collection_ids: [], allowed_methods: null, ip_allowlist: null, policy_id: null, ...over
})

export interface AccessGateway { gateway: Gateway, url: string, port: number, tlsPort: number | null }

/** A gateway on port 0 authenticating against the given (mutable) maps; closed in teardown. */
export async function startAccessGateway (t: T, profiles: ReadonlyMap<string, ProfileSnapshot>, policies: ReadonlyMap<string, PolicySnapshot>,
  limiter: RateLimiter, conf: Record<string, string> = {}): Promise<AccessGateway> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEWAY_SERVER, ...conf })
  const gateway = createGateway({
    config, logger: silentLogger, readiness: async () => ({ ok: true, checks: {} }), env: {},
    access: { profiles: () => profiles, policies: () => policies, limiter }
  })
  const { port, tlsPort } = await gateway.listen()
  t.teardown(() => gateway.close())
  return { gateway, url: `http://127.0.0.1:${port}`, port, tlsPort }
}
