/**
 * The gateway MCP at `/mcp` on the gateway listener: agents call published APIs
 * with a profile's credentials (Authorization: Bearer, X-Client-ID, X-Profile-ID,
 * or a client certificate), checked on every request exactly as a gateway call
 * is (credentials, suspended client, address allowlist). The tools show only
 * what the profile may call; execute_endpoint is a real gateway call, counted
 * by the profile's policy like any other. See docs/mcp.md.
 */
import { AppError, errorBody, forbidden, serviceUnavailable } from '../../common/errors.js'
import type { Collection, Proxy } from '../../common/types.js'
import type { GatewayAccess } from '../access/gate.js'
import { createProfileAuthenticator, type Principal } from '../access/profile-auth.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { RoutingView } from '../routes/reloader.js'
import { checkOrigin } from './origin.js'
import { buildCatalogue, viewFor, type Catalogue } from './gateway-catalogue.js'
import type { McpSessions } from './sessions.js'
import type { McpPeer } from '../gateway/mcp-route.js'

/** The MCP SDK loads with the first MCP request, not at start (see management-mcp.ts). */
const loadSdkSide = async () => await Promise.all([import('./http-session.js'), import('./gateway-tools.js')])

export interface GatewayMcp {
  /** The served configuration changed; the tool catalogue is rebuilt when next asked for. */
  setRoutes (view: Pick<RoutingView, 'collections' | 'proxies'>): void
  /** The caller's profile, checked exactly as a gateway call (no collection), or why not. */
  authenticate (h: Headers, peer: McpPeer, method?: string): Promise<Principal | AppError>
  handle (req: Request, peer: McpPeer): Promise<Response>
}

export interface GatewayMcpOptions {
  access: GatewayAccess | undefined
  sessions: McpSessions
  logger: Logger
  /** Bound on one execute_endpoint call (the gateway's own upstream timeout applies inside it). */
  executeTimeoutMs: number
  /** Host/Origin checks against DNS rebinding (MCP_ALLOWED_HOSTS, MCP_ALLOWED_ORIGINS; bound to HOST). */
  config: Pick<Readonly<Config>, 'HOST' | 'MANAGEMENT_HOST' | 'MCP_ALLOWED_HOSTS' | 'MCP_ALLOWED_ORIGINS'>
}

export function createGatewayMcp (o: GatewayMcpOptions): GatewayMcp {
  let routes: Pick<RoutingView, 'collections' | 'proxies'> = { collections: () => [], proxies: () => [] }
  let built: Catalogue | null = null
  const catalogue = (): Catalogue => (built ??= buildCatalogue(routes.collections(), routes.proxies()))
  const authenticator = createProfileAuthenticator()

  const refuse = (err: AppError, rid: string): Response =>
    new Response(JSON.stringify(errorBody(err, { request_id: rid })), {
      status: err.status, headers: { 'content-type': 'application/json', 'x-request-id': rid, ...err.headers }
    })

  const authenticate = async (h: Headers, peer: McpPeer, method = 'POST'): Promise<Principal | AppError> => {
    const access = o.access
    if (access === undefined) return serviceUnavailable('The gateway MCP needs client profiles, which this instance does not load.')
    try {
      return await authenticator.authenticate(access.profiles(), {
        collectionId: null,
        method,
        authorization: h.get('authorization') ?? undefined,
        clientId: h.get('x-client-id') ?? undefined,
        profileId: h.get('x-profile-id') ?? undefined,
        remoteIp: peer.remoteIp,
        certFingerprint: peer.certFingerprint
      })
    } catch (err) {
      o.logger.error({ err, request_id: peer.requestId }, 'gateway MCP access check failed')
      return serviceUnavailable('Access could not be checked; retry shortly.', 1)
    }
  }

  return {
    setRoutes (view) { routes = view; built = null },
    authenticate,
    async handle (req, peer) {
      const rid = peer.requestId
      const access = o.access
      if (access === undefined) return refuse(serviceUnavailable('The gateway MCP needs client profiles, which this instance does not load.'), rid)
      const h = req.headers
      const badOrigin = checkOrigin({ host: h.get('host') ?? undefined, origin: h.get('origin') ?? undefined }, o.config, o.config.HOST)
      if (badOrigin !== null) return refuse(forbidden(badOrigin), rid)
      const who = await authenticate(h, peer, req.method)
      if (who instanceof AppError) return refuse(who, rid)
      const profile = access.profiles().get(who.profile_id)!
      const view = viewFor(catalogue(), profile)
      // The tools call this gateway with the caller's own credentials and address: nothing is trusted on the MCP's word.
      const selfHeaders: Record<string, string> = { 'x-client-id': who.client_id, 'x-profile-id': who.profile_id, [peer.self.hop[0]]: peer.self.hop[1] }
      const authorization = h.get('authorization')
      if (authorization !== null) selfHeaders.authorization = authorization
      const [{ serveMcpRequest }, { createGatewayMcpServer }] = await loadSdkSide()
      const res = await serveMcpRequest(req, {
        owner: `profile:${who.profile_id}`,
        sessions: o.sessions,
        build: () => createGatewayMcpServer(view, { origin: peer.self.origin, headers: selfHeaders, timeoutMs: o.executeTimeoutMs, publicOrigin: new URL(req.url).origin })
      })
      res.headers.set('x-request-id', rid)
      return res
    }
  }
}
