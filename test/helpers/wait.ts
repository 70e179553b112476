/**
 * Waiting in tests for something a user would see. A deadline here is only a backstop against a
 * test that would otherwise hang: it is generous (a loaded 2-core machine running the suite must
 * never fail on it) and never what a test asserts; the file's own tap timeout bounds the rest.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** How long a wait for something expected may take before the test fails: 60 s. */
export const PATIENCE_MS = 60_000

/** Polls `check` every `everyMs` until it returns true (true) or `timeoutMs` passes (false). */
export async function eventually (check: () => boolean | Promise<boolean>, timeoutMs = PATIENCE_MS, everyMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (Date.now() >= deadline) return false
    await sleep(everyMs)
  }
}

/** Calls `attempt` every `everyMs` until `done` holds for its result or `timeoutMs` passes; answers the last result. */
export async function retryUntil<T> (attempt: () => Promise<T>, done: (value: T) => boolean, timeoutMs = PATIENCE_MS, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await attempt()
    if (done(value) || Date.now() >= deadline) return value
    await sleep(everyMs)
  }
}
