/** Reading and parsing request bodies on the management listener (REST and the management MCP). */
import type { IncomingMessage } from 'node:http'
import { payloadTooLarge, unsupportedMediaType } from '../../common/errors.js'
import { jsonSyntaxError } from '../../common/json-error.js'

export async function readBody (req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw payloadTooLarge(`The request body is larger than ${limit} bytes.`)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) throw payloadTooLarge(`The request body is larger than ${limit} bytes.`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

export function parseJson (req: IncomingMessage, raw: Buffer): unknown {
  if (raw.length === 0) return undefined
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase() // split always yields one part
  if (type !== 'application/json' && !type.endsWith('+json')) throw unsupportedMediaType('Send the body as application/json.')
  const text = raw.toString('utf8')
  try {
    return JSON.parse(text)
  } catch (err) {
    throw jsonSyntaxError(text, err as Error)
  }
}
