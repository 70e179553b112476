/**
 * The parts of a generated OpenAPI document that describe the gateway itself rather than a
 * proxy: its error body, the error answers it can give, and its authentication headers.
 */

export const ERROR_SCHEMA_NAME = 'GatewayError'

/** The gateway's error body, `{error: {code, message, details?}, request_id}`. */
export const gatewayErrorSchema = (): Record<string, unknown> => ({
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable snake_case error code.' },
        message: { type: 'string', description: 'A sentence that can be shown as is.' },
        details: { description: 'Optional details, such as the fields that failed validation.' }
      }
    },
    request_id: { type: 'string', description: 'The X-Request-ID of the request.' }
  }
})

interface ErrorAnswer { status: string, name: string, description: string, auth?: true }

const ERROR_ANSWERS: ErrorAnswer[] = [
  { status: '400', name: 'BadRequest', description: 'The request failed validation (parameters or body).' },
  { status: '401', name: 'Unauthorized', description: 'Gateway credentials are missing or wrong.', auth: true },
  { status: '403', name: 'Forbidden', description: 'The profile may not call this collection, or the client is suspended.', auth: true },
  { status: '404', name: 'NotFound', description: 'No published endpoint matches the path.' },
  { status: '429', name: 'TooManyRequests', description: "The profile's rate limit or quota is spent; retry after Retry-After seconds.", auth: true },
  { status: '502', name: 'BadGateway', description: 'The backend could not be reached or gave an invalid answer.' },
  { status: '504', name: 'GatewayTimeout', description: 'The backend did not answer in time.' }
]

/** `components.responses` entries for the gateway's errors. */
export function gatewayErrorResponses (authRequired: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const a of ERROR_ANSWERS) {
    if (a.auth === true && !authRequired) continue
    const response: Record<string, unknown> = {
      description: a.description,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA_NAME}` } } }
    }
    if (a.status === '429') {
      response.headers = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } }
    }
    out[a.name] = response
  }
  return out
}

/** The `responses` map entries of one operation that point at the shared error answers. */
export function errorResponseRefs (authRequired: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const a of ERROR_ANSWERS) {
    if (a.auth === true && !authRequired) continue
    out[a.status] = { $ref: `#/components/responses/${a.name}` }
  }
  return out
}

/** Security schemes for `Authorization: Bearer`, `X-Client-ID` and `X-Profile-ID`; all three are needed together. */
export const gatewaySecuritySchemes = (): Record<string, unknown> => ({
  gateway_bearer: { type: 'http', scheme: 'bearer', description: "The access profile's API key or JWT." },
  gateway_client_id: { type: 'apiKey', in: 'header', name: 'X-Client-ID', description: 'The API client id.' },
  gateway_profile_id: { type: 'apiKey', in: 'header', name: 'X-Profile-ID', description: 'The access profile id.' }
})

export const gatewaySecurity = (): Array<Record<string, string[]>> =>
  [{ gateway_bearer: [], gateway_client_id: [], gateway_profile_id: [] }]
