/**
 * The gateway MCP's four tools, for one profile's view of the published APIs:
 * list_collections → list_endpoints → endpoint_details → execute_endpoint.
 * execute_endpoint makes a real call to this gateway (see SelfCall), so it goes
 * through the same pipeline as any client call: authentication, the policy's
 * counters, validation, workflow or forwarding, and the request log.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { exampleOf, exampleParam, fillPath, gatewayPath, parametersOf, type ProfileView } from './gateway-catalogue.js'

/** How a tool calls this gateway as the MCP caller (same credentials, same client address). */
export interface SelfCall {
  /** e.g. http://127.0.0.1:8080 */
  origin: string
  /** Headers that identify the caller: their credentials and the signed hop header carrying their address. */
  headers: Record<string, string>
  timeoutMs: number
  /** The gateway's address as the agent sees it (for the curl example). */
  publicOrigin: string
}

/** Largest answer body handed back to the agent; the rest is cut with a note. */
const MAX_RESULT_BYTES = 256 * 1024
const NAMES_IN_DESCRIPTION = 20
const KEPT_RESPONSE_HEADERS = ['content-type', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id', 'allow']
const REFUSED_HEADERS = new Set(['authorization', 'x-client-id', 'x-profile-id', 'host', 'content-length', 'connection', 'transfer-encoding', 'x-gatehouse-tls', 'keep-alive', 'upgrade', 'te', 'trailer'])

const text = (value: unknown, isError = false): CallToolResult =>
  ({ content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }], ...(isError ? { isError: true } : {}) })

export function gatewayTools (view: ProfileView): Tool[] {
  const names = view.collections.slice(0, NAMES_IN_DESCRIPTION).map(e => `'${e.collection.name}' (${e.collection.base_path})`).join(', ')
  const more = view.collections.length > NAMES_IN_DESCRIPTION ? `, and ${view.collections.length - NAMES_IN_DESCRIPTION} more` : ''
  const available = view.collections.length === 0 ? 'No API is published for your profile yet.' : `APIs you may call: ${names}${more}.`
  return [
    {
      name: 'list_collections',
      title: 'List the APIs you may call',
      description: `Lists the API collections this profile may call through the gateway, each with its id, base path, description and number of endpoints. Start here, then call list_endpoints with a collection id. ${available}`,
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    {
      name: 'list_endpoints',
      title: 'List the endpoints of an API',
      description: 'Lists the published endpoints of one collection: endpoint id, name, description, HTTP methods and gateway path (with {param} placeholders). Then call endpoint_details for the parameters and schemas, or execute_endpoint to call one.',
      inputSchema: { type: 'object', properties: { collection_id: { type: 'string', description: 'The collection id from list_collections (its base path or name also work).' } }, required: ['collection_id'] },
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    {
      name: 'endpoint_details',
      title: 'Describe one endpoint',
      description: 'Describes one endpoint so it can be called correctly: path and query parameters (type, required, default, description), the JSON Schema of the request body and of the response, and a ready-to-use example of execute_endpoint arguments plus the equivalent curl command.',
      inputSchema: { type: 'object', properties: { endpoint_id: { type: 'string', description: 'The endpoint id from list_endpoints.' } }, required: ['endpoint_id'] },
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    {
      name: 'execute_endpoint',
      title: 'Call an endpoint',
      description: 'Calls one endpoint through the gateway with your profile\'s credentials, exactly like a client would: the rate limit and quota of your plan count this call, the request is validated against the endpoint\'s parameters and schema, and the backend (or the endpoint\'s workflow) answers. Returns {status, headers, body}. An answer with status 400 or more comes back as an error result carrying the same status and body (for 429, wait the retry-after seconds).',
      inputSchema: {
        type: 'object',
        properties: {
          endpoint_id: { type: 'string', description: 'The endpoint id from list_endpoints.' },
          method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], description: 'HTTP method; default: the endpoint\'s first method.' },
          path_params: { type: 'object', additionalProperties: true, description: 'Values for the {param} placeholders of the path; for a path ending in /*, "wildcard" is the rest of the path.' },
          query: { type: 'object', additionalProperties: true, description: 'Query parameters (a value may be an array for a repeated parameter).' },
          headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra request headers (credentials are added by the gateway and cannot be overridden).' },
          body: { description: 'Request body: a JSON value (sent as application/json) or a string (sent as text/plain unless headers say otherwise).' }
        },
        required: ['endpoint_id']
      },
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true }
    }
  ]
}

export function createGatewayMcpServer (view: ProfileView, self: SelfCall): Server {
  const server = new Server({ name: 'gatehouse-gateway', version: '1.0.0' }, {
    capabilities: { tools: {} },
    instructions: 'Published APIs of this gateway. Call list_collections, then list_endpoints, then endpoint_details for parameters and schemas, and execute_endpoint to make a real call (it counts against your plan\'s limits).'
  })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: gatewayTools(view) }))
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>
    switch (req.params.name) {
      case 'list_collections':
        return text({
          collections: view.collections.map(e => ({
            id: e.collection.id, name: e.collection.name, description: e.collection.description, base_path: e.collection.base_path, endpoints: e.proxies.length
          }))
        })
      case 'list_endpoints': {
        const e = view.collection(String(args.collection_id ?? ''))
        if (e === null) return text(`No collection '${String(args.collection_id)}' is available to this profile; call list_collections for the ids.`, true)
        return text({
          collection: { id: e.collection.id, name: e.collection.name, base_path: e.collection.base_path },
          endpoints: e.proxies.map(p => {
            const ep = view.endpoint(p.id)!
            return { endpoint_id: p.id, name: p.name, description: p.description, methods: ep.methods, path: gatewayPath(e.collection, p) }
          })
        })
      }
      case 'endpoint_details': {
        const ep = view.endpoint(String(args.endpoint_id ?? ''))
        if (ep === null) return text(`No endpoint '${String(args.endpoint_id)}' is available to this profile; call list_endpoints for the ids.`, true)
        return text(describeEndpoint(ep, self.publicOrigin))
      }
      case 'execute_endpoint':
        return await execute(view, self, args, extra.signal, traceHeaders(extra.requestInfo?.headers))
      default:
        return text(`Unknown tool '${req.params.name}'. The tools are list_collections, list_endpoints, endpoint_details and execute_endpoint.`, true)
    }
  })
  return server
}

function describeEndpoint (ep: NonNullable<ReturnType<ProfileView['endpoint']>>, origin: string) {
  const { collection, proxy, methods } = ep
  const params = parametersOf(proxy)
  const method = methods[0]
  const pathParams: Record<string, unknown> = {}
  const query: Record<string, unknown> = {}
  for (const p of params) {
    if (p.location === 'path') pathParams[p.name] = exampleParam(p)
    else if (p.required) query[p.name] = exampleParam(p)
  }
  const withBody = method !== 'GET' && method !== 'DELETE' && proxy.request_schema !== null
  const body = withBody ? exampleOf(proxy.request_schema) : undefined
  const example: Record<string, unknown> = { endpoint_id: proxy.id, method }
  if (Object.keys(pathParams).length > 0) example.path_params = pathParams
  if (Object.keys(query).length > 0) example.query = query
  if (body !== undefined) example.body = body
  let url = ''
  try { url = origin + fillPath(gatewayPath(collection, proxy), pathParams) } catch { url = origin + gatewayPath(collection, proxy) }
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()
  const curl = [`curl -X ${method} '${url}${qs === '' ? '' : `?${qs}`}'`]
  if (collection.auth_required) curl.push("-H 'authorization: Bearer <your key or token>' -H 'x-client-id: <client id>' -H 'x-profile-id: <profile id>'")
  if (body !== undefined) curl.push(`-H 'content-type: application/json' -d '${JSON.stringify(body)}'`)
  return {
    endpoint_id: proxy.id,
    name: proxy.name,
    description: proxy.description,
    collection: { id: collection.id, name: collection.name, base_path: collection.base_path },
    methods,
    path: gatewayPath(collection, proxy),
    parameters: params,
    request_schema: proxy.request_schema,
    response_schema: proxy.response_schema,
    streaming: proxy.streaming,
    example: { tool: 'execute_endpoint', arguments: example, curl: curl.join(' ') }
  }
}

/**
 * The agent's W3C trace context from this tools/call request (not from the session's first
 * request): the call through the gateway continues the agent's trace.
 */
function traceHeaders (h: Record<string, string | string[] | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of ['traceparent', 'tracestate']) {
    const v = h?.[k]
    if (typeof v === 'string' && v !== '') out[k] = v
  }
  return out
}

async function execute (view: ProfileView, self: SelfCall, args: Record<string, unknown>, signal: AbortSignal, trace: Record<string, string>): Promise<CallToolResult> {
  const ep = view.endpoint(String(args.endpoint_id ?? ''))
  if (ep === null) return text(`No endpoint '${String(args.endpoint_id)}' is available to this profile; call list_endpoints for the ids.`, true)
  const method = typeof args.method === 'string' ? args.method.toUpperCase() : ep.methods[0]
  if (!ep.methods.includes(method as typeof ep.methods[number])) return text(`Method ${method} is not available on this endpoint; use ${ep.methods.join(', ')}.`, true)
  let path: string
  try { path = fillPath(gatewayPath(ep.collection, ep.proxy), objectArg(args.path_params)) } catch (err) { return text((err as Error).message, true) }
  const qs = new URLSearchParams()
  for (const [k, v] of Object.entries(objectArg(args.query))) {
    for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined && one !== null) qs.append(k, typeof one === 'object' ? JSON.stringify(one) : String(one))
  }
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(objectArg(args.headers))) if (!REFUSED_HEADERS.has(k.toLowerCase()) && typeof v === 'string') headers[k.toLowerCase()] = v
  Object.assign(headers, trace, self.headers)
  let body: string | undefined
  if (args.body !== undefined && args.body !== null && method !== 'GET') {
    body = typeof args.body === 'string' ? args.body : JSON.stringify(args.body)
    headers['content-type'] ??= typeof args.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json'
  }
  const url = `${self.origin}${path}${qs.size > 0 ? `?${qs.toString()}` : ''}`
  let res: Response
  try {
    res = await fetch(url, { method, headers, body, redirect: 'manual', signal: AbortSignal.any([signal, AbortSignal.timeout(self.timeoutMs)]) })
  } catch (err) {
    return text(`The gateway could not be called: ${(err as Error).message}.`, true)
  }
  const kept: Record<string, string> = {}
  for (const h of KEPT_RESPONSE_HEADERS) { const v = res.headers.get(h); if (v !== null) kept[h] = v }
  const { text: raw, truncated } = await readBounded(res)
  let parsed: unknown = raw
  if (/json/i.test(res.headers.get('content-type') ?? '') && !truncated) { try { parsed = JSON.parse(raw) } catch {} }
  const result: Record<string, unknown> = { status: res.status, headers: kept, body: parsed }
  if (truncated) result.note = `The body was cut at ${MAX_RESULT_BYTES} bytes.`
  return text(result, res.status >= 400)
}

const objectArg = (v: unknown): Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}

async function readBounded (res: Response): Promise<{ text: string, truncated: boolean }> {
  if (res.body === null) return { text: '', truncated: false }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
    if (size >= MAX_RESULT_BYTES) { await reader.cancel().catch(() => {}); return { text: Buffer.concat(chunks).subarray(0, MAX_RESULT_BYTES).toString('utf8'), truncated: true } }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false }
}
