/**
 * The management API's own OpenAPI 3.1 document (GET /api/v1/openapi.json), built from the
 * routes as registered: their roles and body schemas, and the operation catalogue's names,
 * descriptions and query parameters. The same sources make the MCP tools, so the two agree.
 */
import { gatewayErrorSchema } from '../collections-io/openapi-gateway-parts.js'
import { OPERATIONS, operationKey } from './operation-catalogue.js'
import type { Route, Router } from './router.js'

// The management error body is the gateway's without request_id.
const gatewayError = gatewayErrorSchema() as { properties: { error: unknown } }
const ERROR = { type: 'object', required: ['error'], properties: { error: gatewayError.properties.error } }
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } })
const CREATES = /^(create|duplicate|import)_/

export function managementOpenApi (router: Router, opts: { mcpPath: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of router.routes) {
    if (route.opts.public === true || route.segments[0] !== 'api' || route.segments[1] !== 'v1') continue
    const path = '/' + route.segments.map(s => s.startsWith(':') ? `{${s.slice(1)}}` : s).join('/')
    if (path === opts.mcpPath) continue
    ;(paths[path] ??= {})[route.method.toLowerCase()] = operationOf(route)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse management API',
      version: 'v1',
      description: 'Configure the Gatehouse API gateway: collections, proxies, workflows, credentials, policies, clients and profiles. ' +
        'Every route needs an OIDC bearer token; x-required-role names the least role. The same operations are MCP tools at ' +
        `${opts.mcpPath} (operationId = tool name).`
    },
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An OIDC access token (or one from the built-in local issuer: npm run token).' } },
      schemas: { Error: ERROR }
    }
  }
}

function operationOf (route: Route): Record<string, unknown> {
  const info = OPERATIONS[operationKey(route.method, route.segments)]
  const role = route.opts.role ?? 'viewer'
  const parameters: unknown[] = route.segments.filter(s => s.startsWith(':')).map(s => ({ name: s.slice(1), in: 'path', required: true, schema: { type: 'string' } }))
  for (const [name, schema] of Object.entries(info?.query ?? {})) {
    const { description, ...rest } = schema as { description?: string }
    parameters.push({ name, in: 'query', required: false, schema: rest, ...(description !== undefined ? { description } : {}) })
  }
  const op: Record<string, unknown> = {
    operationId: info?.name ?? `${route.method.toLowerCase()}_${route.segments.slice(2).filter(s => !s.startsWith(':')).join('_').replace(/[^a-z0-9_]/gi, '_')}`,
    tags: [route.segments[2] ?? 'api'],
    ...(info !== undefined ? { summary: info.name.replace(/_/g, ' '), description: info.description } : {}),
    'x-required-role': role,
    ...(parameters.length > 0 ? { parameters } : {})
  }
  if (route.opts.body !== undefined) op.requestBody = { required: false, content: { 'application/json': { schema: route.opts.body } } }
  else if (info?.rawTypes !== undefined) op.requestBody = { required: true, content: Object.fromEntries(Object.entries(info.rawTypes).map(([type, schema]) => [type, { schema }])) }
  else if (route.opts.raw === true) {
    op.requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } }, ...(info?.rawArg?.name === 'file' ? { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } } } : {}) } }
  }
  const status = route.method === 'DELETE' ? '204' : info !== undefined && CREATES.test(info.name) ? '201' : '200'
  const ok = status === '204'
    ? { description: 'Done.' }
    : { description: 'Success.', content: info?.streaming === true ? { 'text/event-stream': { schema: { type: 'string' } } } : { 'application/json': { schema: { type: 'object' } } } }
  op.responses = {
    [status]: ok,
    ...(route.opts.body !== undefined || route.opts.raw === true || route.method === 'GET' ? { 400: errorResponse('Invalid input; details list every problem.') } : {}),
    401: errorResponse('Missing, invalid or expired token.'),
    403: errorResponse(`Needs the ${role} role.`),
    ...(route.segments.some(s => s.startsWith(':')) ? { 404: errorResponse('Not found.') } : {}),
    ...Object.fromEntries(Object.entries(info?.errors ?? {}).map(([code, what]) => [code, errorResponse(what)]))
  }
  return op
}
