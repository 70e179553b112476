/**
 * The category of a management operation, as MCP clients see it on each tool
 * (`_meta["gatehouse/category"]`): the spec's tool categories. It follows from the route's
 * path (a proxy's workflow routes are workflows, a client's profile routes are profiles);
 * an operation whose path says nothing sets `category` in the operation catalogue. An operation
 * with neither has no category, and the MCP test names it (test/main/mcp/tool-categories.test.ts).
 */

export const TOOL_CATEGORIES = ['collections', 'proxies', 'workflows', 'policies', 'clients', 'profiles', 'credentials', 'audit_logs', 'metrics', 'request_logs'] as const
export type ToolCategory = typeof TOOL_CATEGORIES[number]

/** The tool-list key of a tool's category. */
export const CATEGORY_META = 'gatehouse/category'

/** By the first segment after /api/v1. */
const BY_RESOURCE: Readonly<Record<string, ToolCategory>> = {
  collections: 'collections',
  proxies: 'proxies',
  workflows: 'workflows',
  policies: 'policies',
  clients: 'clients',
  credentials: 'credentials',
  'audit-logs': 'audit_logs',
  metrics: 'metrics',
  'request-logs': 'request_logs'
}

/** `segments`: the route's path without its leading slash, split (['api', 'v1', 'proxies', ':id', 'workflow']). */
export function categoryOf (segments: readonly string[], explicit?: ToolCategory): ToolCategory | undefined {
  if (explicit !== undefined) return explicit
  const [api, v1, resource] = segments
  if (api !== 'api' || v1 !== 'v1' || resource === undefined) return undefined
  if (resource === 'proxies' && segments.includes('workflow')) return 'workflows'
  if (resource === 'clients' && segments.includes('profiles')) return 'profiles'
  return BY_RESOURCE[resource]
}
