/** Prompts of the management MCP (`prompts/list`, `prompts/get`) for the common tasks. */
import { ErrorCode, McpError, type GetPromptResult } from '@modelcontextprotocol/sdk/types.js'

interface PromptArg { name: string, description: string, required?: boolean }
interface Prompt { name: string, title: string, description: string, arguments: PromptArg[], render (args: Record<string, string>): string }

export const MANAGEMENT_PROMPTS: Prompt[] = [
  {
    name: 'publish_api_from_openapi',
    title: 'Publish an API from an OpenAPI document',
    description: 'Import an OpenAPI document as a collection, review its proxies, publish them and give a client access.',
    arguments: [
      { name: 'document', description: 'The OpenAPI 3.x document as JSON text (or where the user will paste it).', required: true },
      { name: 'base_path', description: 'The base path to serve it under, e.g. /billing.' },
      { name: 'upstream_url', description: 'The backend base URL, when the document has no servers entry.' }
    ],
    render: a => [
      'Publish an API through the Gatehouse gateway from this OpenAPI document.',
      '1. Call import_openapi with the document' + (a.base_path !== undefined ? `, base_path ${a.base_path}` : '') + (a.upstream_url !== undefined ? ` and upstream_url ${a.upstream_url}` : '') + '. Report any warnings.',
      '2. Call list_proxies with the new collection_id and show the user the paths and methods.',
      '3. After the user agrees, call bulk_proxies with action "publish" and the proxy ids.',
      '4. Offer access: create_policy (rate limit / quota) if needed, create_client, then create_profile with the collection in collection_ids; show the returned credentials once.',
      '',
      'Document:',
      a.document ?? '(ask the user for it)'
    ].join('\n')
  },
  {
    name: 'build_workflow',
    title: 'Build a workflow for a proxy',
    description: 'Design, validate, test and save a workflow on a proxy.',
    arguments: [
      { name: 'proxy_id', description: 'The proxy that gets the workflow.', required: true },
      { name: 'goal', description: 'What the workflow should do, in plain words.', required: true }
    ],
    render: a => [
      `Build a workflow for proxy ${a.proxy_id ?? '(ask which proxy)'} that does: ${a.goal ?? '(ask the user)'}.`,
      '1. Call get_proxy and get_proxy_workflow to see the proxy and any current definition.',
      '2. Call workflow_list_nodes; use each node type\'s settings schema and edge-authoring hints (entry_trigger, requires_source_handle, supported_source_handles, wiring_hint). Exactly one entry trigger (http_trigger for a proxy called through the gateway); end with a response_node.',
      '3. Call validate_proxy_workflow with {workflow} and fix every reported problem.',
      '4. Call workflow_test_workflow (or execute_workflow_partial with pinned_outputs to stub backends) using the proxy\'s workflow_id, and check each node\'s output.',
      '5. Save with update_proxy_workflow {workflow}; enable it ({enabled: true}) only when the user asks.'
    ].join('\n')
  },
  {
    name: 'diagnose_failing_proxy',
    title: 'Diagnose a failing proxy',
    description: 'Find why calls to a proxy fail, from its request logs, metrics, configuration and workflow executions.',
    arguments: [
      { name: 'proxy_id', description: 'The failing proxy.', required: true },
      { name: 'since', description: 'ISO 8601 time to look from (default: the last hour).' }
    ],
    render: a => [
      `Diagnose failures of proxy ${a.proxy_id ?? '(ask which proxy)'}.`,
      `1. Call list_request_logs with proxy_id ${a.proxy_id ?? ''}${a.since !== undefined ? ` and since ${a.since}` : ''}; group the answers by status and error code.`,
      '2. Call get_proxy and get_collection: status published? collection active? upstream_url and target_path right?',
      '3. 401/403/429: check the calling profile (get_profile), its policy (get_policy) and the client status (get_client).',
      '4. 502/504: the backend is unreachable or slow; check upstream_url. 4xx from the backend: compare the request with request_schema and parameters.',
      '5. If workflow_enabled: list_workflow_executions with status error, then get_workflow_execution to find the failing node.',
      'Report the cause and the smallest fix; change nothing without the user\'s consent.'
    ].join('\n')
  }
]

export function renderPrompt (name: string, args: Record<string, string>): GetPromptResult {
  const p = MANAGEMENT_PROMPTS.find(x => x.name === name)
  if (p === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt '${name}'; prompts/list names them.`)
  const missing = p.arguments.filter(a => a.required === true && (args[a.name] === undefined || args[a.name] === ''))
  if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `Prompt '${name}' needs ${missing.map(a => a.name).join(', ')}.`)
  return { description: p.description, messages: [{ role: 'user', content: { type: 'text', text: p.render(args) } }] }
}
