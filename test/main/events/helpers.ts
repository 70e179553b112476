import type { StreamItem, Subscription } from '../../../src/main/events/hub.js'
import { PATIENCE_MS } from '../../helpers/wait.js'

// A `next` that outlives a timed-out `take` is kept for the next `take`, so no item is lost.
const pendingNext = new WeakMap<Subscription, Promise<StreamItem | undefined>>()

/** The next `n` items, or fewer if the subscription ends or `timeoutMs` passes first. */
export async function take (sub: Subscription, n: number, timeoutMs = PATIENCE_MS): Promise<StreamItem[]> {
  const items: StreamItem[] = []
  const deadline = Date.now() + timeoutMs
  while (items.length < n) {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>(resolve => { timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())) })
    const next = pendingNext.get(sub) ?? sub.next()
    pendingNext.set(sub, next)
    const item = await Promise.race([next, timeout])
    clearTimeout(timer)
    if (item === 'timeout') break
    pendingNext.delete(sub)
    if (item === undefined) break
    items.push(item)
  }
  return items
}

export const events = (items: StreamItem[]) => items.filter(i => i.type === 'event')
export const ids = (items: StreamItem[]) => items.map(i => i.id)
export const kinds = (items: StreamItem[]) => items.map(i => i.type)

/** A proxy event numbered `n`, so order and count can be checked from the stream. */
export const proxyEvent = (n: number) => ({ resource_kind: 'proxy' as const, proxy_id: `p${n}`, collection_id: 'c1', operation: 'updated' as const, actor_sub: 'alice' })
export const proxyIds = (items: StreamItem[]) => events(items).map(i => (i.event as { proxy_id: string }).proxy_id)
