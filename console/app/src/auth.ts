/**
 * Sign-in. Local issuer: `npm run token -- --sub alice --role admin --url` opens the
 * console with `#access_token=…`; the token is kept in sessionStorage (this tab only)
 * and removed from the address bar at once. External issuer: OIDC authorization
 * code + PKCE against OIDC_ISSUER with OIDC_CLIENT_ID, both read from /api/v1/auth/config.
 */
export type Role = 'viewer' | 'editor' | 'admin'

export interface AuthConfig {
  issuer: string
  client_id: string | null
  scopes: string[]
  audience: string | null
  roles_claim: string
  local_issuer: boolean
  token_command: string | null
  /** The service serves CONFIG_FILE: configuration changes through the API are refused (409). */
  config_file?: boolean
}

export interface Session { token: string, sub: string, role: Role | null, expiresAt: number | null }

const TOKEN = 'gatehouse.console.token'
const PKCE = 'gatehouse.console.pkce'
const RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 }

/** Takes a token handed over in the fragment and clears it from the address bar and history. */
export function takeFragmentToken (): void {
  const params = new URLSearchParams(location.hash.slice(1))
  const token = params.get('access_token')
  if (token === null) return
  sessionStorage.setItem(TOKEN, token)
  history.replaceState(history.state, '', location.pathname + location.search)
}

export function signOut (): void { sessionStorage.removeItem(TOKEN) }

export function atLeast (session: Session | null, role: Role): boolean {
  return session?.role != null && RANK[session.role] >= RANK[role]
}

export function readSession (rolesClaim: string): Session | null {
  const token = sessionStorage.getItem(TOKEN)
  if (token === null) return null
  try {
    const claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>
    const raw = claims[rolesClaim]
    const roles = (Array.isArray(raw) ? raw : [raw]).filter((r): r is Role => r === 'viewer' || r === 'editor' || r === 'admin')
    const role = roles.sort((a, b) => RANK[b] - RANK[a])[0] ?? null
    return { token, sub: String(claims.sub ?? ''), role, expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : null }
  } catch {
    sessionStorage.removeItem(TOKEN)
    return null
  }
}

const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

async function discovery (issuer: string): Promise<Record<string, string>> {
  const res = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)
  if (!res.ok) throw new Error(`The identity provider's discovery document answered ${res.status}.`)
  return await res.json()
}

/** Starts the OIDC authorization code flow with PKCE (S256): leaves the page. */
export async function startOidcSignIn (config: AuthConfig): Promise<void> {
  const meta = await discovery(config.issuer)
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)))
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)))
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
  sessionStorage.setItem(PKCE, JSON.stringify({ verifier, state, back: location.pathname }))
  const url = new URL(meta.authorization_endpoint)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.client_id ?? '',
    redirect_uri: `${location.origin}/`,
    scope: config.scopes.join(' '),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    ...(config.audience !== null ? { audience: config.audience } : {})
  }).toString()
  location.assign(url.toString())
}

/** Finishes the flow when the provider redirected back with ?code=…&state=…; returns where to go. */
export async function finishOidcSignIn (config: AuthConfig): Promise<string | null> {
  const query = new URLSearchParams(location.search)
  const code = query.get('code')
  const pending = sessionStorage.getItem(PKCE)
  if (code === null || pending === null) return null
  sessionStorage.removeItem(PKCE)
  history.replaceState(history.state, '', location.pathname)
  const { verifier, state, back } = JSON.parse(pending) as { verifier: string, state: string, back: string }
  if (query.get('state') !== state) throw new Error('The sign-in answer does not match the request (state); sign in again.')
  const meta = await discovery(config.issuer)
  const res = await fetch(meta.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: `${location.origin}/`, client_id: config.client_id ?? '', code_verifier: verifier })
  })
  const body = await res.json() as { access_token?: string, error_description?: string }
  if (!res.ok || body.access_token === undefined) throw new Error(body.error_description ?? `The token endpoint answered ${res.status}.`)
  sessionStorage.setItem(TOKEN, body.access_token)
  return back
}
