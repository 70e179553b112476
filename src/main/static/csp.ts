/**
 * The Content-Security-Policy of the console and the developer portal. Both are built bundles
 * that load only their own files (no inline script or style: the build emits none, and React's
 * `style` props go through the CSSOM, which CSP does not restrict), so scripts, styles, images
 * and connections are limited to their own origin. The console also talks to the OIDC issuer
 * from the browser (discovery and the token endpoint of the sign-in with PKCE): those origins
 * are added once known. No framing (clickjacking), no plugins, no <base> tricks.
 */

const COMMON = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // The favicon is a data: URL in index.html.
  "img-src 'self' data:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
]

/** The console's policy; `connectOrigins` are the OIDC issuer's and its token endpoint's origins. */
export function consoleCsp (connectOrigins: readonly string[]): string {
  return [...COMMON, `connect-src ${["'self'", ...connectOrigins].join(' ')}`].join('; ')
}

/** The portal calls the gateway it is served by (same origin): nothing else. */
export const PORTAL_CSP = [...COMMON, "connect-src 'self'"].join('; ')
