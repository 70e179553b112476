/**
 * Named HTTP backends on loopback addresses (127.0.0.x), each counting what it served, that can
 * be stopped (connections cut) and started again on the same address and port.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

interface T { teardown (fn: () => unknown): void }

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, b: Backend) => void

export interface Backend {
  name: string
  host: string
  port: number
  url: string
  hits: number
  /** Method and path of each request served, in order. */
  seen: Array<{ method: string, url: string, headers: http.IncomingHttpHeaders, body: string }>
  handler: Handler | null
  running: boolean
  stop (): Promise<void>
  start (): Promise<void>
}

/** Answers `{"backend": name, "method", "url", "body"}`; `?delay=ms` waits first. */
const defaultHandler: Handler = (req, res, body, b) => {
  const delay = Number(new URL(req.url!, 'http://x').searchParams.get('delay') ?? 0)
  const answer = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': b.name })
    res.end(JSON.stringify({ backend: b.name, method: req.method, url: req.url, body: body.toString() }))
  }
  if (delay > 0) setTimeout(answer, delay)
  else answer()
}

export async function startBackend (t: T, host: string, name: string, port = 0, handler: Handler | null = null): Promise<Backend> {
  let server: http.Server | null = null
  const b: Backend = {
    name, host, port, url: '', hits: 0, seen: [], handler, running: false,
    async start () {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = []
        req.on('data', c => chunks.push(c))
        req.on('end', () => {
          b.hits++
          const body = Buffer.concat(chunks)
          b.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: body.toString() })
          ;(b.handler ?? defaultHandler)(req, res, body, b)
        })
      })
      server.keepAliveTimeout = 30_000
      await new Promise<void>((resolve, reject) => { server!.once('error', reject); server!.listen(b.port, host, resolve) })
      b.port = (server.address() as AddressInfo).port
      b.url = `http://${host.includes(':') ? `[${host}]` : host}:${b.port}`
      b.running = true
    },
    async stop () {
      if (server === null) return
      const s = server
      server = null
      b.running = false
      s.closeAllConnections()
      await new Promise(resolve => s.close(resolve))
    }
  }
  await b.start()
  t.teardown(async () => { await b.stop() })
  return b
}

/** Sends `n` requests, `concurrency` at a time; returns each answer's status and backend name (null: no answer). */
export async function load (url: string | ((i: number) => string), n: number, concurrency: number, init: (i: number) => RequestInit = () => ({})): Promise<Array<{ status: number, backend: string | null }>> {
  const out: Array<{ status: number, backend: string | null }> = new Array(n)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++
      try {
        const res = await fetch(typeof url === 'string' ? url : url(i), init(i))
        const text = await res.text()
        out[i] = { status: res.status, backend: res.headers.get('x-backend') ?? (text.startsWith('{') ? JSON.parse(text).backend ?? null : null) }
      } catch { out[i] = { status: 0, backend: null } }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return out
}

export const countBy = (xs: Array<{ backend: string | null }>): Record<string, number> => {
  const c: Record<string, number> = {}
  for (const x of xs) c[String(x.backend)] = (c[String(x.backend)] ?? 0) + 1
  return c
}
