/**
 * Trigger test-listen sessions (http_trigger): the builder asks to capture the
 * next request that reaches a proxy's gateway path, even while its workflow is
 * disabled, and watches it run.
 *
 *   listen ──▶ session (waiting, expires) ──▶ route table overlay: the proxy
 *              answers through its workflow while a session waits
 *   gateway request ──▶ take(proxy) ──▶ captured ──▶ run (mode test) ──▶ answer
 *   stream ◀── listening, captured, node_started/finished/failed, execution | expired
 *
 * Sessions live on the instance that started them; the capture happens there.
 */
import { randomUUID } from 'node:crypto'
import type { Proxy } from '../../common/types.js'

export interface ListenFrame { event: string, data: unknown }

export interface ListenSession {
  id: string
  workflow_id: string
  proxy_id: string
  trigger_type: string
  status: 'waiting' | 'captured' | 'finished' | 'expired' | 'cancelled'
  started_at: string
  expires_at: string
  /** Where the request is awaited at the gateway. */
  gateway: { methods: string[], path: string }
}

interface Live {
  session: ListenSession
  frames: ListenFrame[]
  listeners: Set<(f: ListenFrame | null) => void>
  timer: NodeJS.Timeout
  ended: boolean
}

const MAX_FRAMES = 2000
// Ended sessions stay readable this long, so a stream opened just after the capture still sees it.
const KEEP_ENDED_MS = 60_000

export interface TriggerListens {
  start (proxy: Proxy, triggerType: string, gatewayPath: string, timeoutMs: number): ListenSession
  get (workflowId: string, id: string): ListenSession | undefined
  /** Marks the waiting session of a proxy captured and returns it (the gateway's hook). */
  take (proxyId: string): ListenSession | undefined
  emit (id: string, event: string, data: unknown): void
  end (id: string, status: ListenSession['status']): void
  /** Replays the session's frames, then follows it; `null` when it ends. */
  subscribe (id: string, fn: (f: ListenFrame | null) => void): () => void
  /** The gateway's proxies, with those awaiting a capture answering through their workflow. */
  overlay (proxy: Proxy): Proxy
  /**
   * True for a proxy record the overlay switched on: a request matched against it that finds no
   * waiting session (the listen ended meanwhile) must not run the disabled workflow.
   */
  overlaid (proxy: object): boolean
  close (): void
}

/** `onChange(proxyId)`: a session for the proxy started or ended; its route should be overlaid again. */
export function createTriggerListens (opts: { onChange: (proxyId: string) => void }): TriggerListens {
  const live = new Map<string, Live>()
  const overlaid = new WeakSet<object>()
  let closed = false

  const finish = (l: Live, status: ListenSession['status'], frame?: ListenFrame) => {
    if (l.ended) return
    if (frame !== undefined) push(l, frame)
    l.ended = true
    l.session.status = status
    clearTimeout(l.timer)
    for (const fn of l.listeners) fn(null)
    l.listeners.clear()
    const forget = setTimeout(() => live.delete(l.session.id), KEEP_ENDED_MS)
    forget.unref()
    if (!closed) opts.onChange(l.session.proxy_id)
  }
  const push = (l: Live, f: ListenFrame) => {
    if (l.frames.length < MAX_FRAMES) l.frames.push(f)
    for (const fn of l.listeners) fn(f)
  }

  return {
    start (proxy, triggerType, gatewayPath, timeoutMs) {
      // One waiting session per proxy: a new listen replaces the previous one.
      for (const l of live.values()) {
        if (l.session.proxy_id === proxy.id && l.session.status === 'waiting') finish(l, 'cancelled', { event: 'cancelled', data: { message: 'A newer listen replaced this one.' } })
      }
      const now = Date.now()
      const session: ListenSession = {
        id: randomUUID(),
        workflow_id: proxy.workflow_id,
        proxy_id: proxy.id,
        trigger_type: triggerType,
        status: 'waiting',
        started_at: new Date(now).toISOString(),
        expires_at: new Date(now + timeoutMs).toISOString(),
        gateway: { methods: proxy.methods, path: gatewayPath }
      }
      const l: Live = { session, frames: [], listeners: new Set(), ended: false, timer: setTimeout(() => {}, 0) }
      l.timer = setTimeout(() => {
        if (l.session.status === 'waiting') finish(l, 'expired', { event: 'expired', data: { message: `${gatewayPath === '' ? `The ${triggerType} did not fire` : `No request reached ${gatewayPath}`} within ${Math.round(timeoutMs / 1000)} s.` } })
      }, timeoutMs)
      l.timer.unref()
      live.set(session.id, l)
      push(l, { event: 'listening', data: session })
      opts.onChange(proxy.id)
      return session
    },
    get (workflowId, id) {
      const l = live.get(id)
      return l?.session.workflow_id === workflowId ? l.session : undefined
    },
    take (proxyId) {
      for (const l of live.values()) {
        if (l.session.proxy_id !== proxyId || l.session.status !== 'waiting') continue
        l.session.status = 'captured'
        clearTimeout(l.timer)
        return l.session
      }
      return undefined
    },
    emit (id, event, data) {
      const l = live.get(id)
      if (l !== undefined && !l.ended) push(l, { event, data })
    },
    end (id, status) {
      const l = live.get(id)
      if (l !== undefined) finish(l, status)
    },
    subscribe (id, fn) {
      const l = live.get(id)
      if (l === undefined) { fn(null); return () => {} }
      for (const f of l.frames) fn(f)
      if (l.ended) { fn(null); return () => {} }
      l.listeners.add(fn)
      return () => { l.listeners.delete(fn) }
    },
    overlay (p) {
      let waiting = false
      if (live.size > 0) for (const l of live.values()) if (l.session.proxy_id === p.id && l.session.status === 'waiting') { waiting = true; break }
      if (!waiting || p.workflow_enabled || p.workflow === null) return p
      const on = { ...p, workflow_enabled: true }
      overlaid.add(on)
      return on
    },
    overlaid (proxy) { return overlaid.has(proxy) },
    close () {
      closed = true
      for (const l of live.values()) finish(l, 'cancelled')
      live.clear()
    }
  }
}
