/**
 * A loopback OTLP/HTTP trace receiver (no collector binary exists here): it
 * decodes each POST to /v1/traces with the official opentelemetry-proto
 * definitions (fetched by scripts/test-services.sh, loaded by protobufjs) or as OTLP JSON, and
 * keeps the spans flat. `hold` makes it accept requests and never answer (a
 * slow collector).
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import protobuf from 'protobufjs'
import { TOOLS_DIR } from './tools.js'

interface T { teardown (fn: () => unknown): void }

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  startNs: bigint
  endNs: bigint
  attributes: Record<string, string | number | boolean>
  status: { code: number, message: string }
  resource: Record<string, string | number | boolean>
  flags: number
}

// opentelemetry-proto's definitions, fetched by scripts/test-services.sh into the tools directory.
const PROTOS = path.join(TOOLS_DIR, 'otlp-protos')
let requestType: protobuf.Type | null = null

function decoder (): protobuf.Type {
  if (requestType !== null) return requestType
  const root = new protobuf.Root()
  if (!fs.existsSync(path.join(PROTOS, 'opentelemetry'))) throw new Error(`The OTLP protobuf definitions are missing in ${PROTOS}: run scripts/test-services.sh`)
  root.resolvePath = (_origin, target) => path.join(PROTOS, target)
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false })
  requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest')
  return requestType
}

const hex = (b: unknown): string => b instanceof Uint8Array ? Buffer.from(b).toString('hex') : typeof b === 'string' ? b : ''

function anyValue (v: Record<string, unknown>): string | number | boolean {
  if ('stringValue' in v) return v.stringValue as string
  if ('intValue' in v) return Number(v.intValue)
  if ('doubleValue' in v) return Number(v.doubleValue)
  if ('boolValue' in v) return Boolean(v.boolValue)
  return JSON.stringify(v)
}

function attrs (list: Array<{ key: string, value: Record<string, unknown> }> | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const a of list ?? []) out[a.key] = anyValue(a.value ?? {})
  return out
}

/** Flattens a decoded ExportTraceServiceRequest (protobufjs object, or OTLP JSON with hex ids). */
export function flatten (req: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const rs of req.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes)
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), name: s.name, kind: Number(s.kind ?? 0),
          startNs: BigInt(String(s.startTimeUnixNano)), endNs: BigInt(String(s.endTimeUnixNano)), attributes: attrs(s.attributes),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' }, resource, flags: Number(s.flags ?? 0)
        })
      }
    }
  }
  return out
}

export interface OtlpReceiver {
  url: string
  spans: ReceivedSpan[]
  requests: Array<{ contentType: string, headers: http.IncomingHttpHeaders }>
  /** Accept and never answer (a slow collector); false: answer 200 again. */
  hold: boolean
  /** Resolves once `pred` holds over the spans received so far. */
  waitFor (pred: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan[]>
  close (): Promise<void>
}

export async function startOtlpReceiver (t: T): Promise<OtlpReceiver> {
  const type = decoder()
  const waiters: Array<() => void> = []
  const held: http.ServerResponse[] = []
  const r: OtlpReceiver = {
    url: '', spans: [], requests: [], hold: false,
    async waitFor (pred, what, timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs
      while (!pred(r.spans)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}; spans so far: ${JSON.stringify(r.spans.map(s => s.name))}`)
        await new Promise<void>(resolve => { waiters.push(resolve); setTimeout(resolve, 200) })
      }
      return r.spans
    },
    async close () {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      if (r.hold) { held.push(res); return }
      const body = Buffer.concat(chunks)
      const contentType = String(req.headers['content-type'] ?? '')
      r.requests.push({ contentType, headers: req.headers })
      try {
        const decoded = contentType.includes('json') ? JSON.parse(body.toString()) : type.toObject(type.decode(body), { longs: String, defaults: false })
        r.spans.push(...flatten(decoded))
      } catch (err) { res.writeHead(400).end(String(err)); return }
      res.writeHead(200, { 'content-type': contentType }).end(contentType.includes('json') ? '{}' : '')
      for (const w of waiters.splice(0)) w()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => r.close())
  return r
}
