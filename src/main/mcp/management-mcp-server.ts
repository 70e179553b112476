/**
 * The management MCP's SDK server for one session: tools (each a management route run through
 * `invoke`, with its role check, validation, events and audit entries) and prompts. Loaded with
 * the first MCP request (management-mcp.ts), so that the SDK costs nothing until it is used.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema, McpError, type CallToolResult
} from '@modelcontextprotocol/sdk/types.js'
import { errorBody } from '../../common/errors.js'
import { invoke, managementError, type Caller, type FrameSink } from '../management/operation.js'
import type { RequestContext } from '../management/router.js'
import type { ManagementMcpDeps } from './management-mcp.js'
import { pathOf, type ManagementTool } from './management-tools.js'
import { MANAGEMENT_PROMPTS, renderPrompt } from './management-prompts.js'

export interface ServerContext {
  deps: ManagementMcpDeps
  tools: () => ManagementTool[]
  caller: Caller
  req: IncomingMessage
  res: ServerResponse
}

const SERVER_INFO = { name: 'gatehouse-management', version: '1.0.0' }
const INSTRUCTIONS = 'Operate the Gatehouse API gateway: collections (base paths forwarding to a backend) hold proxies (endpoints); ' +
  'a proxy may run a workflow; clients reach published proxies through access profiles limited by policies. ' +
  'Every tool needs the role its description names. List tools answer {items, next_cursor}. Errors come back as ' +
  '{error: {code, message, details}} with isError true: read details, fix the arguments and retry.'

export function buildManagementMcpServer ({ deps, tools, caller, req, res }: ServerContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {}, prompts: {} }, instructions: INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools().map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations, ...(t._meta !== undefined && Object.keys(t._meta).length > 0 ? { _meta: t._meta } : {}) }))
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools().find(t => t.name === request.params.name)
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${request.params.name}'; tools/list names them.`)
    const token = request.params._meta?.progressToken
    let progress = 0
    const frames: FrameSink | undefined = tool.info.streaming !== true
      ? undefined
      : (event, data) => {
          if (token === undefined) return
          progress++
          extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message: frameMessage(event, data) } }).catch(() => {})
        }
    return await callTool(deps, tool, caller, request.params.arguments ?? {}, req, res, frames)
  })
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: MANAGEMENT_PROMPTS.map(({ render, ...p }) => p) }))
  server.setRequestHandler(GetPromptRequestSchema, async request => renderPrompt(request.params.name, request.params.arguments ?? {}))
  return server
}

async function callTool (deps: ManagementMcpDeps, tool: ManagementTool, caller: Caller, args: Record<string, unknown>, req: IncomingMessage, res: ServerResponse, frames: FrameSink | undefined): Promise<CallToolResult> {
  let ctx: RequestContext | undefined
  let status = 500
  let reply
  let params: Record<string, string> = {}
  try {
    const input = tool.input(args)
    params = input.params
    reply = await invoke(tool.route, caller, input, { req, res, frames, settle: deps.settle }, c => { ctx = c })
    status = reply?.status ?? 200
    const body = reply?.body
    if (body === undefined) return { content: [{ type: 'text', text: `Done (${status}).` }] }
    return {
      content: [{ type: 'text', text: JSON.stringify(body) }],
      ...(typeof body === 'object' && body !== null && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {})
    }
  } catch (err) {
    const e = managementError(err, deps.logger, { tool: tool.name })
    status = e.status
    const body = { ...errorBody(e), status: e.status }
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body }
  } finally {
    deps.audit.observe({ req, path: pathOf(tool.route, params), route: tool.route, ctx, status, reply, method: tool.route.method, source: 'mcp' })
  }
}

/** One line a human can follow for a streamed frame (node started / finished, captured event). */
function frameMessage (event: string, data: unknown): string {
  const d = data as { node_id?: string, node_name?: string, status?: string } | null
  const who = d?.node_name ?? d?.node_id
  const text = `${event}${who !== undefined ? ` ${who}` : ''}${d?.status !== undefined ? ` (${d.status})` : ''}`
  return text.length > 300 ? `${text.slice(0, 297)}...` : text
}
