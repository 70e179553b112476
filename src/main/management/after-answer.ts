/**
 * Change events wait for the answer of the management request that made them: while a write
 * runs, what it publishes is held, and handed to the event hub once its answer has been written
 * (or its client is gone). The answer never waits behind a fan-out to every event stream, and a
 * UI that refetches on the event finds the change it was told about.
 *
 *   write request ─▶ handler ─publish─▶ held ─(answer written)─▶ hub ─▶ streams
 *   anything else (timers, triggers, other instances) ─publish──────▶ hub
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { ServerResponse } from 'node:http'

/** The sends held for one request; null once its answer is out (later publishes go at once). */
interface Held { sends: Array<() => void> | null }

const current = new AsyncLocalStorage<Held>()

/** Runs `handle` with the events it publishes held until `res` has finished or closed. */
export async function holdEventsUntilAnswered (res: ServerResponse, handle: () => Promise<void>): Promise<void> {
  const held: Held = { sends: [] }
  const release = () => {
    const sends = held.sends
    if (sends === null) return
    held.sends = null
    for (const send of sends) send()
  }
  res.once('finish', release)
  res.once('close', release)
  await current.run(held, handle)
}

/** Sends at once, or after the current management request's answer when inside one. */
export function afterAnswer (send: () => void): void {
  const sends = current.getStore()?.sends
  if (sends == null) send()
  else sends.push(send)
}
