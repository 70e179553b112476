/** A service with gateway threads, as its tests reach it: the management API, /metrics, and the gateway on fresh connections. */
import type { Service } from '../../src/main/server.js'

export async function threadedClient (s: Service) {
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await r.text()
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${text}`)
    return text === '' ? undefined : JSON.parse(text) as any
  }
  const metrics = async () => await (await fetch(`http://127.0.0.1:${s.managementPort}/metrics`, { headers: { connection: 'close' } })).text()
  const sample = (text: string, name: string) => {
    const line = text.split('\n').find(l => l.startsWith(name + ' '))
    return line === undefined ? 0 : Number(line.slice(name.length + 1))
  }
  // One connection per request: the kernel hashes each new connection to one of the threads.
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`http://127.0.0.1:${s.gatewayPort}${path}`, { headers: { ...headers, connection: 'close' } })
    return { status: r.status, headers: r.headers, body: await r.text() }
  }
  /** gatehouse_gateway_thread_requests_total of threads 0 and 1. */
  const perThread = (text: string) => [0, 1].map(i => sample(text, `gatehouse_gateway_thread_requests_total{thread="${i}"}`))
  return { api, metrics, sample, call, perThread }
}
