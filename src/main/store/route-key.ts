/**
 * The shape of a proxy path used for conflict detection: parameter names do not
 * matter (`/a/{id}` and `/a/{name}` answer the same requests).
 */
export const routeKey = (path: string): string => path.replace(/\{[^/}]+\}/g, '{}')

/** Names of `{param}` segments in order. */
export const pathParams = (path: string): string[] => [...path.matchAll(/\{([^/}]+)\}/g)].map(m => m[1]!) // group 1 always takes part
