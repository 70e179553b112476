/**
 * The management API from the browser: bearer token on every call, the error
 * body's message surfaced as is, 401 reported once as an expired session.
 */
import { readSseFrames } from '../../shared/sse'

export class ApiError extends Error {
  constructor (readonly status: number, readonly code: string, message: string, readonly details: unknown) { super(message) }
}

export interface Page<T> { items: T[], next_cursor: string | null }

let token: string | null = null
let onUnauthorized: (reason: string | undefined) => void = () => {}

/** The token requests carry, and what a 401 does (it gets the API's reason, when the answer gave one). */
export function setApiToken (t: string | null, unauthorized: (reason: string | undefined) => void): void { token = t; onUnauthorized = unauthorized }

async function send (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { method, headers: { ...headers, ...(token !== null ? { authorization: `Bearer ${token}` } : {}) } }
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    init.body = JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
  }
  const res = await fetch(`/api/v1${path}`, init)
  if (res.ok) return res
  return await failure(res)
}

async function failure (res: Response): Promise<never> {
  const parsed = await res.json().catch(() => ({})) as { error?: { code?: string, message?: string, details?: unknown } }
  if (res.status === 401) onUnauthorized(parsed.error?.message)
  throw new ApiError(res.status, parsed.error?.code ?? 'error', parsed.error?.message ?? `The server answered ${res.status}.`, parsed.error?.details)
}

export async function api<T = any> (method: string, path: string, body?: unknown): Promise<T> {
  const res = await send(method, path, body)
  if (res.status === 204) return undefined as T
  return await res.json() as T
}

export const get = async <T = any>(path: string) => await api<T>('GET', path)

/** Downloads an authenticated GET as a file. */
export async function download (path: string, fallbackName: string): Promise<void> {
  const res = await send('GET', path)
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName
  const url = URL.createObjectURL(await res.blob())
  const a = Object.assign(document.createElement('a'), { href: url, download: name })
  a.click()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/** A request answered as Server-Sent Events (builder runs, trigger listens): each frame's event name and JSON data. */
export async function readStream (method: 'GET' | 'POST', path: string, body: unknown, onFrame: (event: string, data: any) => void, signal?: AbortSignal): Promise<void> {
  const res = await fetch(`/api/v1${path}`, {
    method,
    signal,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token !== null ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  if (!res.ok) await failure(res)
  await readSseFrames(res, onFrame)
}
