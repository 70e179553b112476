/**
 * The worker end of a run's MessagePort (present only when the caller asked for
 * events or a cache):
 *
 *   worker                                  main thread (pool.ts)
 *     event  {t:'event', event} ───────────►  hooks.onEvent(event)
 *     kv     {t:'kv', id, op, key, …} ─────►  hooks.kv.get/set
 *            ◄──────── {t:'kv_result', id, value | error}
 *     end    {t:'end'} ────────────────────►  main closes its side
 *
 * The worker never opens a Redis connection: cache calls travel to the main
 * thread, and each waits at most until the run's deadline.
 */
import type { MessagePort } from 'node:worker_threads'
import type { BridgeMessage, NodeKv, RunEvent } from './types.js'

export interface Bridge {
  emit (e: RunEvent): void
  kv: NodeKv | undefined
  /** Tells the main side the run is over and releases the port. */
  close (): void
}

export function openBridge (port: MessagePort | undefined, withKv: boolean, deadline: number): Bridge {
  if (port === undefined) return { emit: () => {}, kv: undefined, close: () => {} }
  let next = 1
  const waiting = new Map<number, { resolve: (v: unknown) => void, reject: (e: Error) => void, timer: NodeJS.Timeout }>()
  port.on('message', (m: BridgeMessage) => {
    if (m.t !== 'kv_result') return
    const w = waiting.get(m.id)
    if (w === undefined) return
    waiting.delete(m.id)
    clearTimeout(w.timer)
    if (m.error !== undefined) w.reject(new Error(m.error))
    else w.resolve(m.value)
  })
  // A run waiting for nothing but the cache must not keep the port from letting the worker idle.
  port.unref()
  const request = async (msg: Omit<Extract<BridgeMessage, { t: 'kv' }>, 'id' | 't'>): Promise<unknown> => {
    const id = next++
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { waiting.delete(id); reject(new Error('The cache did not answer before the run deadline.')) }, Math.max(1, deadline - Date.now()))
      waiting.set(id, { resolve, reject, timer })
      port.postMessage({ t: 'kv', id, ...msg } satisfies BridgeMessage)
    })
  }
  return {
    emit: e => { port.postMessage({ t: 'event', event: e } satisfies BridgeMessage) },
    kv: withKv
      ? {
          get: async key => await request({ op: 'get', key }),
          set: async (key, value, ttlMs) => { await request({ op: 'set', key, value, ttl_ms: ttlMs }) }
        }
      : undefined,
    close: () => {
      for (const w of waiting.values()) { clearTimeout(w.timer); w.reject(new Error('The run ended.')) }
      waiting.clear()
      port.postMessage({ t: 'end' } satisfies BridgeMessage)
      port.close()
    }
  }
}
