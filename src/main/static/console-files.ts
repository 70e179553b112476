/**
 * Serves the management console on the management listener: GET/HEAD requests
 * that no route answers and that are outside /api/ get the built console (its
 * client-side routes get index.html). Everything else goes to the router.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { consoleCsp } from './csp.js'
import type { StaticFiles } from './static-files.js'

/** `connectOrigins`: origins the console's own code may call besides this one (the OIDC issuer's); read per answer, since discovery may add one. */
export function consoleResponder (files: StaticFiles, isRoute: (method: string, path: string) => boolean, connectOrigins: () => readonly string[] = () => []) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!files.built || (req.method !== 'GET' && req.method !== 'HEAD')) return false
    const path = (req.url ?? '/').split('?')[0]! // split gives at least one element
    if (path.startsWith('/api/') || isRoute(req.method, path)) return false
    const file = files.lookup(path, (req.headers.accept ?? '').includes('text/html'))
    if (file === null) return false
    res.writeHead(200, {
      'content-type': file.type,
      'content-length': file.body.length,
      'cache-control': file.cache,
      'x-content-type-options': 'nosniff',
      // The console keeps its token in the tab: no framing by other sites, no referrer leaks.
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'content-security-policy': consoleCsp(connectOrigins())
    })
    res.end(req.method === 'HEAD' ? undefined : file.body)
    return true
  }
}
