/**
 * The one catalogue of errors. Code throws `AppError`s; `errorBody` turns any
 * thrown value into the response body fixed by CONVENTIONS.md:
 *   {"error": {"code", "message", "details"?}}
 * This module is pure: both the main loop and workers import it.
 */

export interface ErrorDetail {
  field?: string
  node_id?: string
  message: string
  [k: string]: unknown
}

export class AppError extends Error {
  readonly status: number
  readonly code: string
  readonly details: unknown
  readonly headers: Record<string, string> | undefined

  constructor (status: number, code: string, message: string, details?: unknown, headers?: Record<string, string>) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
    this.headers = headers
  }
}

export const badRequest = (message: string, details?: unknown) => new AppError(400, 'bad_request', message, details)
export const validationFailed = (message: string, details: ErrorDetail[]) => new AppError(400, 'validation_failed', message, details)
export const invalidJson = (message = 'The request body is not valid JSON.') => new AppError(400, 'invalid_json', message)
export const unauthorized = (message = 'A valid bearer token is required.') =>
  new AppError(401, 'unauthorized', message, undefined, { 'www-authenticate': 'Bearer' })
/** A token was sent but is refused (RFC 6750): the client should get a new one rather than retry. */
export const invalidToken = (message: string) =>
  new AppError(401, 'unauthorized', message, undefined, { 'www-authenticate': 'Bearer error="invalid_token"' })
export const forbidden = (message = 'Your role does not allow this action.') => new AppError(403, 'forbidden', message)
export const notFound = (message = 'Not found.') => new AppError(404, 'not_found', message)
export const methodNotAllowed = (allow: string[], message?: string) =>
  new AppError(405, 'method_not_allowed', message ?? `Method not allowed; use ${allow.join(', ')}.`, undefined, { allow: allow.join(', ') })
export const conflict = (message: string, details?: unknown) => new AppError(409, 'conflict', message, details)
export const preconditionFailed = (message = 'The record changed since you read it; reload and try again.') =>
  new AppError(412, 'precondition_failed', message)
export const payloadTooLarge = (message = 'The request body is too large.') => new AppError(413, 'payload_too_large', message)
export const headersTooLarge = (message: string) => new AppError(431, 'request_header_fields_too_large', message)
export const unsupportedMediaType = (message = 'Send the body as application/json.') => new AppError(415, 'unsupported_media_type', message)
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests; retry later.') =>
  new AppError(429, 'rate_limited', message, undefined, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) })
export const badGateway = (message = 'The backend could not be reached or gave an invalid answer.') => new AppError(502, 'bad_gateway', message)
export const serviceUnavailable = (message = 'The service is not ready.', retryAfterSeconds?: number) =>
  new AppError(503, 'service_unavailable', message, undefined,
    retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) })
export const gatewayTimeout = (message = 'The backend did not answer in time.') => new AppError(504, 'gateway_timeout', message)

export function toAppError (err: unknown): AppError {
  if (err instanceof AppError) return err
  // A stored secret that does not open (wrong key, altered or copied from another record): say so; the message holds no secret.
  if (err instanceof Error && err.name === 'SecretDecryptError') return new AppError(500, String((err as { code?: unknown }).code ?? 'secret_corrupt'), err.message)
  return new AppError(500, 'internal_error', 'An internal error occurred; it has been logged.')
}

export function errorBody (err: AppError, extra?: Record<string, unknown>): { error: Record<string, unknown> } & Record<string, unknown> {
  const error: Record<string, unknown> = { code: err.code, message: err.message }
  if (err.details !== undefined) error.details = err.details
  return { error, ...extra }
}
