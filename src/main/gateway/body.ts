/**
 * Body stage: reads the request body the way the route needs it, then hands
 * the request on (`then`) once the access decision allows it.
 *   - no body: on at once;
 *   - buffered (known length, needed by validation, or a workflow target): gathered, bounded by
 *     the body limit and the declared length, then sent with the head in one write;
 *   - streamed (streaming proxies, chunked uploads): forwarded chunk by chunk, pausing the client
 *     while the backend is slow. `then` returns false when it refused the request.
 */
import { badRequest, payloadTooLarge } from '../../common/errors.js'
import type { GatewayExchange } from './exchange.js'

export function readBody (x: GatewayExchange, then: (x: GatewayExchange, body: Buffer | null) => boolean): void {
  if (!x.hasBody) { x.afterGate(() => then(x, null)); return }
  const route = x.match!.route
  if ((!route.streaming && (x.contentLength >= 0 || route.validator?.needsBody === true)) || route.workflow !== null) bufferBody(x, then)
  else streamBody(x, then)
}

function bufferBody (x: GatewayExchange, then: (x: GatewayExchange, body: Buffer | null) => boolean): void {
  const max = x.match!.route.maxBodyBytes
  const chunks: Buffer[] = []
  let at = 0
  x.res.onData((ab, last) => {
    if (x.ended) return
    at += ab.byteLength
    if ((x.contentLength >= 0 && at > x.contentLength) || at > max) {
      x.fail(at > max ? payloadTooLarge(`The request body is larger than ${max} bytes.`) : badRequest('The request body is longer than its Content-Length.'))
      return
    }
    // The chunk's memory is reused after this callback: copy it.
    chunks.push(Buffer.from(Buffer.from(ab)))
    if (last) { const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, at); x.afterGate(() => then(x, body)) }
  })
}

function streamBody (x: GatewayExchange, then: (x: GatewayExchange, body: Buffer | null) => boolean): void {
  const route = x.match!.route
  const res = x.res
  let received = 0
  let bodyOpen = false
  // uWS misbehaves when resume() meets a socket that is not paused: track it.
  let clientPaused = false
  const pauseClient = () => { if (!clientPaused) { clientPaused = true; res.pause() } }
  const resumeClient = () => { if (clientPaused && !x.aborted) { clientPaused = false; res.resume() } }
  // Chunks that arrive before the access decision wait here (the client is paused meanwhile).
  const early: Array<{ chunk: Buffer, last: boolean }> = []
  const send = (chunk: Buffer, last: boolean): boolean => {
    const ok = x.upstream?.writeBody(chunk, last) ?? true
    if (!ok && !last) pauseClient()
    return ok
  }
  res.onData((ab, last) => {
    if (x.ended) return
    received += ab.byteLength
    x.bytesIn = received
    if (!route.streaming && received > route.maxBodyBytes) { x.upstream?.abort(); x.fail(payloadTooLarge(`The request body is larger than ${route.maxBodyBytes} bytes.`)); return }
    // The chunk's memory is reused after this callback: copy it.
    const chunk = Buffer.from(ab.slice(0))
    if (!bodyOpen) { early.push({ chunk, last }); if (!last) pauseClient(); return }
    send(chunk, last)
  })
  x.afterGate(() => {
    bodyOpen = true
    if (!then(x, null)) return
    const upstream = x.upstream
    if (upstream !== null) upstream.onDrain = resumeClient
    let ok = true
    for (const e of early.splice(0)) ok = send(e.chunk, e.last)
    if (ok) resumeClient()
  })
}
