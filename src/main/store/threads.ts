/** Assistant threads: one saved conversation per (surface, OIDC sub). */
import { randomUUID } from 'node:crypto'
import { preconditionFailed } from '../../common/errors.js'
import { iso, json } from './rows.js'
import type { Queryable, Store } from './types.js'

export type ThreadSurface = 'management' | 'developer_portal'

export interface ThreadMessage {
  role: 'user' | 'assistant' | 'system' | 'tool'
  content: unknown
  [k: string]: unknown
}

export interface Thread {
  /** null until the thread is first saved. */
  id: string | null
  surface: ThreadSurface
  title: string | null
  messages: ThreadMessage[]
  metadata: Record<string, unknown>
  /** 0 until the thread is first saved; `If-Match: "0"` means "only if none is saved yet". */
  version: number
  created_at: string | null
  updated_at: string | null
}

export interface ThreadInput { title?: string | null, messages: ThreadMessage[], metadata?: Record<string, unknown> }

function toThread (r: any): Thread {
  return {
    id: r.id,
    surface: r.surface,
    title: r.title ?? null,
    messages: json(r.messages),
    metadata: json(r.metadata),
    version: Number(r.version),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at)
  }
}

const emptyThread = (surface: ThreadSurface): Thread =>
  ({ id: null, surface, title: null, messages: [], metadata: {}, version: 0, created_at: null, updated_at: null })

async function findThread (q: Queryable, surface: ThreadSurface, sub: string, lock = false): Promise<Thread | null> {
  const { rows } = await q.query(`SELECT * FROM assistant_threads WHERE surface = $1 AND sub = $2${lock ? ' FOR UPDATE' : ''}`, [surface, sub])
  return rows.length === 0 ? null : toThread(rows[0])
}

/** The user's thread, or an empty one (version 0) when none is saved. */
export async function getThread (q: Queryable, surface: ThreadSurface, sub: string): Promise<Thread> {
  return await findThread(q, surface, sub) ?? emptyThread(surface)
}

const checkVersion = (current: Thread | null, ifVersion: number | undefined): void => {
  if (ifVersion !== undefined && ifVersion !== (current?.version ?? 0)) throw preconditionFailed()
}

/** Replaces the whole thread (creates it on first save). */
export async function saveThread (store: Store, surface: ThreadSurface, sub: string, input: ThreadInput, ifVersion?: number): Promise<Thread> {
  return await store.tx(async q => {
    const current = await findThread(q, surface, sub, true)
    checkVersion(current, ifVersion)
    const messages = JSON.stringify(input.messages)
    const metadata = JSON.stringify(input.metadata ?? {})
    const title = input.title ?? null
    // Two first saves racing: the primary key turns the second INSERT into an UPDATE.
    const { rows } = await q.query(
      `INSERT INTO assistant_threads (id, surface, sub, title, messages, metadata) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (surface, sub) DO UPDATE SET title = EXCLUDED.title, messages = EXCLUDED.messages, metadata = EXCLUDED.metadata,
         version = assistant_threads.version + 1, updated_at = now()
       RETURNING *`, [randomUUID(), surface, sub, title, messages, metadata])
    return toThread(rows[0])
  })
}

/** Deletes the thread; true when one existed. */
export async function deleteThread (store: Store, surface: ThreadSurface, sub: string, ifVersion?: number): Promise<boolean> {
  return await store.tx(async q => {
    const current = await findThread(q, surface, sub, true)
    checkVersion(current, ifVersion)
    if (current === null) return false
    await q.query('DELETE FROM assistant_threads WHERE surface = $1 AND sub = $2', [surface, sub])
    return true
  })
}
