import type { LockManager } from './types.js'

interface Lease { owner: string, expiresAt: number }

/** One-instance leases; expired ones are swept every 1024 calls so memory stays bounded without a timer. */
export function createMemoryLocks (): LockManager {
  const leases = new Map<string, Lease>()
  let calls = 0
  const held = (name: string, now: number): Lease | undefined => {
    if (++calls % 1024 === 0) for (const [k, l] of leases) if (l.expiresAt <= now) leases.delete(k)
    const l = leases.get(name)
    return l !== undefined && l.expiresAt > now ? l : undefined
  }
  return {
    async acquire (name, ttlMs, owner) {
      const now = Date.now()
      const l = held(name, now)
      if (l !== undefined && l.owner !== owner) return false
      leases.set(name, { owner, expiresAt: now + ttlMs })
      return true
    },
    async renew (name, ttlMs, owner) {
      const now = Date.now()
      const l = held(name, now)
      if (l?.owner !== owner) return false
      l.expiresAt = now + ttlMs
      return true
    },
    async release (name, owner) {
      const l = held(name, Date.now())
      if (l?.owner !== owner) return false
      leases.delete(name)
      return true
    },
    async claimOnce (key, ttlMs) {
      const now = Date.now()
      // Claims live in their own namespace so a claim key never meets a lock name.
      const name = `\0claim:${key}`
      if (held(name, now) !== undefined) return false
      leases.set(name, { owner: '', expiresAt: now + ttlMs })
      return true
    }
  }
}
