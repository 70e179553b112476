/** Reading and parsing request bodies on the management listener (REST and the management MCP). */
import type { IncomingMessage } from 'node:http'
import { AppError, payloadTooLarge, unsupportedMediaType } from '../../common/errors.js'

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
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json' && !type.endsWith('+json')) throw unsupportedMediaType('Send the body as application/json.')
  const text = raw.toString('utf8')
  try {
    return JSON.parse(text)
  } catch (err) {
    throw jsonSyntaxError(text, err as Error)
  }
}

/** A JSON syntax error with where it is: the character offset, line and column (V8 names the position). */
export function jsonSyntaxError (text: string, err: Error): AppError {
  const m = /position (\d+)/.exec(err.message)
  const position = m === null ? (/Unexpected end/.test(err.message) ? text.length : null) : Number(m[1])
  if (position === null) return new AppError(400, 'invalid_json', 'The request body is not valid JSON.', [{ field: '(body)', message: err.message }])
  const before = text.slice(0, position).split('\n')
  const line = before.length
  const column = before[before.length - 1].length + 1
  return new AppError(400, 'invalid_json', `The request body is not valid JSON: ${err.message.replace(/ in JSON at position \d+.*$/, '')} at line ${line}, column ${column}.`,
    [{ field: '(body)', message: err.message, position, line, column }])
}
