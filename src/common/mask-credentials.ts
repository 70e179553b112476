/**
 * Credentials inside text that names a URL: the password of `scheme://user:password@host` (or a
 * user part alone, often a token: `https://TOKEN@host`), and secret-looking query parameters
 * (`?password=…`, `sslpassword`, `token`, `api_key`, …). Every error and log line that may carry
 * a configured URL (DATABASE_URL, REDIS_URL, OIDC, OTLP, the assistant's API) goes through here.
 */

export const MASK = '****'

// scheme://[user][:password]@ — user and password stop at the characters that end a URL's authority.
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:'"<>]*)(?::([^\s/?#@'"<>]*))?@/gi
const SECRET_PARAM = /([?&;](?:password|passwd|pwd|sslpassword|pass|token|access_token|secret|api_key|apikey|key)=)([^&;#\s'"]*)/gi

export function maskCredentials (text: string): string {
  // The common case (no URL with credentials) costs two index lookups.
  if (!text.includes('://')) return text
  return text
    .replace(USERINFO, (_m, scheme: string, user: string, pass: string | undefined) =>
      pass !== undefined ? `${scheme}${user}:${MASK}@` : `${scheme}${user === '' ? '' : MASK}@`)
    .replace(SECRET_PARAM, (_m, name: string) => `${name}${MASK}`)
}
