/**
 * cron_trigger: every instance keeps the schedule; for each slot, the first
 * instance to claim `cron:<workflow>:<slot time>` runs it (a claim in Redis with
 * CACHE_TYPE=redis), so a slot runs at most once across instances even when the
 * claiming instance dies mid-run. Slots are never caught up: a slot missed while
 * every instance was down is skipped, not run late (and so never twice).
 *
 *   timer ──▶ slot S ──▶ claimOnce(workflow, S) ──won──▶ run {triggered_at, trigger, schedule, timezone, run_id}
 *     └──▶ next slot after S (slots more than MAX_LATE_MS old are skipped)
 */
import { Cron } from 'croner'
import type { LockManager } from '../cache/types.js'
import type { StartTrigger } from './types.js'

// Long enough to outlive any instance's view of the slot; short enough that per-second schedules stay small in Redis.
const CLAIM_TTL_MS = 10 * 60_000
// A slot whose timer fires later than this (a blocked loop, a suspended machine) is skipped rather than run late.
const MAX_LATE_MS = 30_000
// Timers longer than this are re-armed in steps: each step is a heartbeat, and setTimeout overflows past 24.8 days.
const MAX_WAIT_MS = 5_000

/** Parses a cron_trigger's settings; throws a message a user can act on. */
export function cronPattern (settings: Record<string, unknown>): { expression: string, timezone: string, cron: Cron } {
  const expression = String(settings.cron_expression ?? '').trim()
  const timezone = typeof settings.timezone === 'string' && settings.timezone !== '' ? settings.timezone : 'UTC'
  const fields = expression.split(/\s+/).length
  if (fields !== 5 && fields !== 6) throw new Error(`cron_expression '${expression}' must have 5 fields (minute hour day month weekday) or 6 (with seconds first).`)
  try {
    return { expression, timezone, cron: new Cron(expression, { paused: true, timezone, mode: '5-or-6-parts' }) }
  } catch (err) {
    throw new Error(`cron_expression '${expression}' with timezone '${timezone}' is not valid: ${(err as Error).message}`)
  }
}

export function cronTrigger (locks: LockManager): StartTrigger {
  return scope => {
    const { expression, timezone, cron } = cronPattern(scope.node.settings)
    let timer: NodeJS.Timeout | undefined
    const arm = (after: Date) => {
      if (scope.signal.aborted) return
      let slot = cron.nextRun(after)
      if (slot !== null && Date.now() - slot.getTime() > MAX_LATE_MS) slot = cron.nextRun(new Date())
      if (slot === null) { scope.healthy({ next_slot: null }); return }
      scope.healthy({ next_slot: slot.toISOString() })
      const wait = () => {
        const ms = slot.getTime() - Date.now()
        // Timers may fire a millisecond early: wait again until the slot time has come.
        if (ms > 0) { timer = setTimeout(wait, Math.min(ms, MAX_WAIT_MS)); scope.beat(); return }
        arm(slot)
        void fire(slot)
      }
      wait()
    }
    const fire = async (slot: Date) => {
      const at = slot.toISOString()
      if (!await locks.claimOnce(`cron:${scope.proxy.workflow_id}:${at}`, CLAIM_TTL_MS)) return
      if (scope.signal.aborted) return
      await scope.run({ triggered_at: at, trigger: 'cron', schedule: expression, timezone })
    }
    arm(new Date())
    return {
      async stop () {
        clearTimeout(timer)
        cron.stop()
      }
    }
  }
}
