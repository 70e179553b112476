/**
 * MCP sessions kept in the shared key-value cache (memory, or Redis when CACHE_TYPE=redis, so
 * any instance serves any session). A session belongs to the user (OIDC sub) who opened it,
 * expires after `idleMs` without a request, and a user holds at most `perUser`: opening one
 * more closes that user's least recently used session.
 *
 *   mcp:s:<id>        {id, sub, protocol_version, created_at, used_at}   TTL idleMs
 *   mcp:u:<sub>       [ids of the user's sessions]                       TTL idleMs
 */
import { randomUUID } from 'node:crypto'
import type { KeyValueCache } from '../cache/types.js'

export interface McpSession { id: string, sub: string, protocol_version: string, created_at: string, used_at: string }

export interface McpSessions {
  open (sub: string, protocolVersion: string): Promise<McpSession>
  /** The live session for its owner (undefined when unknown, expired or someone else's); refreshes its idle time. */
  use (id: string, sub: string): Promise<McpSession | undefined>
  close (id: string): Promise<boolean>
}

export function createMcpSessions (kv: KeyValueCache, opts: { idleMs: number, perUser: number, prefix?: string }): McpSessions {
  const prefix = opts.prefix ?? 'mcp'
  const sKey = (id: string) => `${prefix}:s:${id}`
  const uKey = (sub: string) => `${prefix}:u:${sub}`
  const load = async (id: string) => await kv.get(sKey(id)) as McpSession | undefined

  return {
    async open (sub, protocolVersion) {
      const now = new Date().toISOString()
      const session: McpSession = { id: randomUUID(), sub, protocol_version: protocolVersion, created_at: now, used_at: now }
      const ids = (await kv.get(uKey(sub)) as string[] | undefined) ?? []
      const live = (await Promise.all(ids.map(load))).filter((s): s is McpSession => s !== undefined && s.sub === sub)
      live.sort((a, b) => a.used_at.localeCompare(b.used_at))
      while (live.length >= opts.perUser) await kv.delete(sKey(live.shift()!.id))
      await kv.set(sKey(session.id), session, opts.idleMs)
      await kv.set(uKey(sub), [...live.map(s => s.id), session.id], opts.idleMs)
      return session
    },
    async use (id, sub) {
      const s = await load(id)
      if (s === undefined || s.sub !== sub) return undefined
      const touched = { ...s, used_at: new Date().toISOString() }
      await kv.set(sKey(id), touched, opts.idleMs)
      return touched
    },
    async close (id) {
      return await kv.delete(sKey(id))
    }
  }
}
