/** An OpenAI-compatible chat-completions server on loopback that answers from a script (tool calls or words). */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface T { teardown (fn: () => unknown): void }
export type Reply = { content?: string, tool_calls?: Array<{ name: string, arguments: unknown }> }

/** An OpenAI-compatible chat-completions server answering from a script, recording what it was sent. */
export async function scriptedModel (t: T) {
  const script: Reply[] = []
  const seen: any[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString())
      seen.push({ path: req.url, authorization: req.headers.authorization, body })
      const next = script.shift() ?? { content: 'Nothing more to do.' }
      const message = {
        role: 'assistant',
        content: next.content ?? null,
        tool_calls: next.tool_calls?.map((c, i) => ({ id: `call_${seen.length}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }))
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: body.model, choices: [{ index: 0, message, finish_reason: next.tool_calls ? 'tool_calls' : 'stop' }] }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, script, seen }
}


