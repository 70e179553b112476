/** JSON syntax errors that say where: used by the management API and the gateway's request validation. */
import { AppError } from './errors.js'

/** A JSON syntax error with where it is: the character offset, line and column (V8 names the position). */
export function jsonSyntaxError (text: string, err: Error): AppError {
  const m = /position (\d+)/.exec(err.message)
  const position = m === null ? (/Unexpected end/.test(err.message) ? text.length : null) : Number(m[1])
  if (position === null) return new AppError(400, 'invalid_json', 'The request body is not valid JSON.', [{ field: '(body)', message: err.message }])
  const before = text.slice(0, position).split('\n')
  const line = before.length
  const column = (before.at(-1) ?? '').length + 1
  return new AppError(400, 'invalid_json', `The request body is not valid JSON: ${err.message.replace(/ in JSON at position \d+.*$/, '')} at line ${line}, column ${column}.`,
    [{ field: '(body)', message: err.message, position, line, column }])
}
