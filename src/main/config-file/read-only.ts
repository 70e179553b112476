/**
 * With CONFIG_FILE set, the file is the configuration: the management routes that would change
 * what the file describes answer 409 naming the setting (REST and MCP alike, since both call the
 * route's handler). Reads, test runs, validations, cache purges and key rotation stay open: none
 * of them changes the file's content.
 */
import { conflict } from '../../common/errors.js'
import type { Route, Router } from '../management/router.js'

/** The first path segments (after /api/v1) of the resources a configuration file holds. */
const FILE_RESOURCES = new Set(['collections', 'proxies', 'credentials', 'policies', 'clients', 'config'])
/** Last segments of writes that change none of them. */
const NOT_FILE_WRITES = new Set(['validate', 'cache', 'rotate'])

/** True when the route changes something a configuration file describes. */
export function writesConfiguration (route: Route): boolean {
  if (route.method === 'GET' || route.method === 'HEAD' || route.opts.public === true) return false
  const [api, v1, first] = route.segments
  if (api !== 'api' || v1 !== 'v1' || first === undefined) return false
  const last = route.segments[route.segments.length - 1] ?? ''
  if (first === 'workflows') return last === 'restore' // a version restored is the proxy's workflow saved
  return FILE_RESOURCES.has(first) && !NOT_FILE_WRITES.has(last)
}

/** Makes every route that writes configuration answer 409 (before its body is checked). */
export function refuseConfigurationWrites (router: Router, path: string): void {
  const refusal = () => conflict(`The configuration comes from CONFIG_FILE (${path}) and cannot be changed through the API; edit the file and send the service SIGHUP.`,
    [{ field: 'CONFIG_FILE', message: `is set (${path}): the management API is read-only for configuration` }])
  for (const route of router.routes) {
    if (!writesConfiguration(route)) continue
    route.handler = async () => { throw refusal() }
    route.validate = null
  }
}
