/**
 * The assistant's tools: an MCP client session on one of this service's own MCP endpoints, opened
 * with the caller's credentials (the management user's bearer token, or the developer's profile
 * credentials), so every tool call is checked exactly as the caller's own call would be.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { SECRET_FIELDS_META } from '../mcp/management-tools.js'
import type { ToolBox } from './agent.js'

export interface McpToolBox extends ToolBox { close (): Promise<void> }

/** Whether a tool's call needs the user's approval (given the tool and the model's arguments). */
export type ConfirmRule = (tool: Tool, args: Record<string, unknown>) => boolean

/** The answer fields a tool names as secret material (the management MCP's `gatehouse/secret_fields`). */
export function secretFieldsOf (tool: Tool): string[] {
  const v = tool._meta?.[SECRET_FIELDS_META]
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []
}

/** Changing or deleting needs approval: every tool not marked read-only. */
export const confirmUnlessReadOnly: ConfirmRule = tool => tool.annotations?.readOnlyHint !== true

export async function openMcpToolBox (url: string, headers: Record<string, string>, confirm: ConfirmRule): Promise<McpToolBox> {
  // The SDK's client loads with the first conversation, not at start.
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/client/streamableHttp.js')])
  const client = new Client({ name: 'gatehouse-assistant', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  await client.connect(transport)
  try {
    const { tools } = await client.listTools()
    return {
      tools: tools.map(tool => ({
        name: tool.name,
        description: tool.description ?? tool.title ?? tool.name,
        parameters: tool.inputSchema as Record<string, unknown>,
        // Asked for whatever the rule says, and always for a tool whose answer holds secrets.
        confirm: args => confirm(tool, args) || secretFieldsOf(tool).length > 0,
        secretFields: secretFieldsOf(tool)
      })),
      async call (name, args) {
        try {
          const r = await client.callTool({ name, arguments: args })
          const content = Array.isArray(r.content) ? r.content : []
          const text = content.map((c: any) => c.type === 'text' ? String(c.text) : JSON.stringify(c)).join('\n')
          return { text, isError: r.isError === true }
        } catch (err) {
          return { text: `The tool call failed: ${(err as Error).message}`, isError: true }
        }
      },
      async close () {
        await transport.terminateSession().catch(() => {})
        await client.close().catch(() => {})
      }
    }
  } catch (err) {
    await client.close().catch(() => {})
    throw err
  }
}
