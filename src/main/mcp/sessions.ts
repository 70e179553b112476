/**
 * MCP sessions kept in the shared key-value cache (memory, or Redis when CACHE_TYPE=redis, so
 * any instance serves any session). A session belongs to the user (OIDC sub) who opened it,
 * expires after `idleMs` without a request, and a user holds at most `perUser`: opening one
 * more closes that user's least recently used session. An instance opens at most `max` sessions
 * that are still live (of one endpoint): past it, a new session is refused (`hasRoom` is false)
 * while the sessions already open keep working. Eviction was the other choice, but it would let
 * anyone able to open sessions end everyone else's, and MCP clients do not all re-initialize
 * after a 404; a refusal at initialize is an error every client shows.
 *
 *   mcp:s:<id>        {id, sub, protocol_version, created_at, used_at}   TTL idleMs
 *   mcp:u:<sub>       [ids of the user's sessions]                       TTL idleMs
 */
import { randomUUID } from 'node:crypto'
import type { KeyValueCache } from '../cache/types.js'

export interface McpSession { id: string, sub: string, protocol_version: string, created_at: string, used_at: string }

export interface McpSessions {
  /** Whether this instance may open one more session (fewer than `max` live ones opened here). */
  hasRoom (): Promise<boolean>
  open (sub: string, protocolVersion: string): Promise<McpSession>
  /** The live session for its owner (undefined when unknown, expired or someone else's); refreshes its idle time. */
  use (id: string, sub: string): Promise<McpSession | undefined>
  close (id: string): Promise<boolean>
}

// Sessions checked against the cache, oldest first, before a full instance refuses one more.
const RECHECK = 64

export function createMcpSessions (kv: KeyValueCache, opts: { idleMs: number, perUser: number, max?: number, prefix?: string }): McpSessions {
  const prefix = opts.prefix ?? 'mcp'
  const sKey = (id: string) => `${prefix}:s:${id}`
  const uKey = (sub: string) => `${prefix}:u:${sub}`
  const load = async (id: string) => await kv.get(sKey(id)) as McpSession | undefined
  const max = opts.max ?? Infinity
  // Sessions opened here: id -> idle expiry, least recently used first (a use moves one to the end).
  const mine = new Map<string, number>()
  const touch = (id: string) => { mine.delete(id); mine.set(id, Date.now() + opts.idleMs) }
  const prune = () => { for (const [id, until] of mine) { if (until > Date.now()) break; mine.delete(id) } }

  return {
    async hasRoom () {
      prune()
      if (mine.size < max) return true
      // Ended or used elsewhere (with Redis another instance may have closed one): ask the cache.
      for (const id of [...mine.keys()].slice(0, RECHECK)) if (await load(id) === undefined) mine.delete(id)
      return mine.size < max
    },
    async open (sub, protocolVersion) {
      const now = new Date().toISOString()
      const session: McpSession = { id: randomUUID(), sub, protocol_version: protocolVersion, created_at: now, used_at: now }
      const ids = (await kv.get(uKey(sub)) as string[] | undefined) ?? []
      const live = (await Promise.all(ids.map(load))).filter((s): s is McpSession => s !== undefined && s.sub === sub)
      live.sort((a, b) => a.used_at.localeCompare(b.used_at))
      while (live.length >= opts.perUser) { const old = live.shift()!.id; mine.delete(old); await kv.delete(sKey(old)) }
      await kv.set(sKey(session.id), session, opts.idleMs)
      touch(session.id)
      await kv.set(uKey(sub), [...live.map(s => s.id), session.id], opts.idleMs)
      return session
    },
    async use (id, sub) {
      const s = await load(id)
      if (s === undefined || s.sub !== sub) return undefined
      const touched = { ...s, used_at: new Date().toISOString() }
      await kv.set(sKey(id), touched, opts.idleMs)
      if (mine.has(id)) touch(id)
      return touched
    },
    async close (id) {
      mine.delete(id)
      return await kv.delete(sKey(id))
    }
  }
}
