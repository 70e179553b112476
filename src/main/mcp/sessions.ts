/**
 * MCP sessions kept in the shared key-value cache (Redis when CACHE_TYPE=redis),
 * so any instance serves any session: a session is only who owns it and the
 * protocol version it negotiated. Each request is answered by a fresh SDK server
 * and stateless transport; this registry is what makes the calls one session.
 * Sessions expire after an idle period; every use renews them.
 */
import { randomUUID } from 'node:crypto'
import type { KeyValueCache } from '../cache/types.js'

export interface McpSession {
  /** Who the session belongs to: a profile (`profile:<id>`) or a user (`user:<sub>`). */
  owner: string
  protocol_version: string
  created_at: string
}

export interface SessionRegistry {
  create (owner: string, protocolVersion: string): Promise<string>
  /** The session, renewed, when it exists and belongs to `owner`; null otherwise. */
  use (id: string, owner: string): Promise<McpSession | null>
  /** True when the session existed and belonged to `owner`. */
  end (id: string, owner: string): Promise<boolean>
}

/** A session unused this long ends (30 minutes, as MCP clients keep one per conversation). */
export const MCP_SESSION_IDLE_MS = 30 * 60_000

const ID = /^[0-9a-f-]{36}$/

export function createSessionRegistry (kv: KeyValueCache, surface: string, idleMs: number): SessionRegistry {
  const key = (id: string) => `mcp:${surface}:${id}`
  const read = async (id: string, owner: string): Promise<McpSession | null> => {
    if (!ID.test(id)) return null
    const s = await kv.get(key(id)) as McpSession | undefined
    // Another owner's session is answered as unknown: a session id alone reveals nothing.
    return s === undefined || s.owner !== owner ? null : s
  }
  return {
    async create (owner, protocolVersion) {
      const id = randomUUID()
      await kv.set(key(id), { owner, protocol_version: protocolVersion, created_at: new Date().toISOString() } satisfies McpSession, idleMs)
      return id
    },
    async use (id, owner) {
      const s = await read(id, owner)
      if (s !== null) await kv.set(key(id), s, idleMs)
      return s
    },
    async end (id, owner) {
      if (await read(id, owner) === null) return false
      return await kv.delete(key(id))
    }
  }
}
