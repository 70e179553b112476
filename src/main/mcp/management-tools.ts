/**
 * Management operations as MCP tools. A tool is a route of the management router that the
 * operation catalogue names; its input schema is assembled from the route's path parameters,
 * the catalogue's query parameters and the route's own body schema (fields flattened into the
 * arguments), and a call goes through `invoke`, the same entry the REST adapter uses.
 */
import { AppError } from '../../common/errors.js'
import { OPERATIONS, operationKey, type OperationInfo } from '../management/operation-catalogue.js'
import type { Route } from '../management/router.js'
import type { OperationInput } from '../management/operation.js'
import { CATEGORY_META, categoryOf } from '../management/operation-category.js'

/**
 * The tool-list key naming the answer fields that hold secret material. An MCP client that
 * forwards tool results to a model (the built-in assistant does) asks before calling such a tool
 * and keeps those fields from the model.
 */
export const SECRET_FIELDS_META = 'gatehouse/secret_fields'

export interface ManagementTool {
  name: string
  description: string
  inputSchema: { type: 'object', properties: Record<string, unknown>, required?: string[], additionalProperties?: boolean }
  annotations: { readOnlyHint?: boolean, destructiveHint?: boolean, idempotentHint?: boolean }
  /** `gatehouse/secret_fields`: the answer fields that hold secret material (see SECRET_FIELDS_META). */
  _meta?: Record<string, unknown>
  route: Route
  info: OperationInfo
  /** Splits tool arguments into the operation's input. */
  input (args: Record<string, unknown>): OperationInput
}

/** What a client reads beside the schema: the category, and the fields that hold secrets. */
function metaOf (route: Route, info: OperationInfo): Record<string, unknown> {
  const category = categoryOf(route.segments, info.category)
  return { ...(category !== undefined ? { [CATEGORY_META]: category } : {}), ...(info.secrets !== undefined ? { [SECRET_FIELDS_META]: info.secrets } : {}) }
}

/** `clientId` -> `client_id`: tool arguments are snake_case like every body field. */
const argName = (param: string): string => param.replace(/[A-Z]/g, c => `_${c.toLowerCase()}`)

export function buildManagementTools (routes: readonly Route[]): ManagementTool[] {
  const tools: ManagementTool[] = []
  for (const route of routes) {
    const info = OPERATIONS[operationKey(route.method, route.segments)]
    if (info === undefined || route.opts.public === true) continue
    tools.push(toolOf(route, info))
  }
  return tools
}

function toolOf (route: Route, info: OperationInfo): ManagementTool {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  const params = route.segments.filter(s => s.startsWith(':')).map(s => s.slice(1))
  for (const p of params) {
    properties[argName(p)] = { type: 'string', minLength: 1, description: `The ${argName(p).replace(/_/g, ' ')} of the path ${'/' + route.segments.join('/')}.` }
    required.push(argName(p))
  }
  const query = info.query ?? {}
  for (const [k, schema] of Object.entries(query)) properties[k] ??= schema
  const body = route.opts.body as { type?: string, properties?: Record<string, unknown>, required?: string[] } | undefined
  // A body field that shares a name with a path parameter is the path's (a profile's client_id).
  const bodyFields = body?.type === 'object' && body.properties !== undefined ? Object.keys(body.properties).filter(f => !(f in properties)) : []
  for (const f of bodyFields) properties[f] = body!.properties![f]
  for (const f of body?.required ?? []) if (bodyFields.includes(f)) required.push(f)
  if (info.rawArg !== undefined) {
    properties[info.rawArg.name] = { type: 'object', description: info.rawArg.description }
    required.push(info.rawArg.name)
  }
  const annotations = {
    readOnlyHint: info.readOnly === true,
    destructiveHint: info.destructive === true,
    idempotentHint: route.method === 'GET' || route.method === 'PUT' || route.method === 'DELETE'
  }
  const role = route.opts.role ?? 'viewer'
  return {
    name: info.name,
    description: `${info.description} Needs the ${role} role.`,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    annotations,
    _meta: metaOf(route, info),
    route,
    info,
    input (args) {
      const out: OperationInput = { params: {}, query: new URLSearchParams(), body: undefined }
      const bodyOut: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(args ?? {})) {
        const param = params.find(p => argName(p) === k)
        if (param !== undefined) out.params[param] = String(v)
        else if (k in query) { if (v !== undefined && v !== null) out.query.set(k, String(v)) } else if (info.rawArg?.name === k) out.rawBody = Buffer.from(JSON.stringify(v))
        else if (bodyFields.includes(k)) bodyOut[k] = v
        else throw new AppError(400, 'validation_failed', `${k} is not an argument of ${info.name}.`, [{ field: k, message: 'is not a known argument' }])
      }
      for (const p of params) if (out.params[p] === undefined) throw new AppError(400, 'validation_failed', `${argName(p)} is required.`, [{ field: argName(p), message: 'is required' }])
      if (body !== undefined) out.body = bodyOut
      return out
    }
  }
}

/** The REST path of a tool call (for the audit trail): the route pattern with its parameters filled in. */
export function pathOf (route: Route, params: Record<string, string>): string {
  return '/' + route.segments.map(s => s.startsWith(':') ? encodeURIComponent(params[s.slice(1)] ?? '') : s).join('/')
}
