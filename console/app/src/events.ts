/**
 * The live change stream drives the page as the spec's "Client reactions" say:
 * every event invalidates the cached queries of its kind (lists refetch silently),
 * and components that hold an open record (edit dialogs, collection detail, the
 * workflow editor) subscribe to react to changes of that record themselves.
 *
 *   EventSource ──event──► invalidate(kind keys) ──► TanStack Query refetches active lists
 *               └────────► listeners (dialogs: Reload banner / close on delete)
 *
 * The browser reconnects by itself and sends Last-Event-ID; when the stream is
 * closed for good (token refused, server restarted) it is reopened with
 * ?last_event_id=, and a `resync` frame refetches everything shown.
 */
import { useEffect, useRef, useState } from 'react'
import type { QueryClient } from '@tanstack/react-query'

export interface ChangeEvent {
  resource_kind: string
  operation?: string
  actor_sub?: string
  collection_id?: string
  related_collection_id?: string
  proxy_id?: string
  policy_id?: string
  client_id?: string
  profile_id?: string
  credential_id?: string
  definition_changed?: boolean
  workflow_enabled?: boolean
}

type Listener = (e: ChangeEvent) => void
const listeners = new Set<Listener>()

/** Query keys each kind of event makes stale. proxy_workflow leaves the editor to decide. */
function staleKeys (e: ChangeEvent): unknown[][] {
  switch (e.resource_kind) {
    case 'collection': return [['collections'], ['collection', e.collection_id], ['proxies', e.collection_id], ['triggers'], ...(e.related_collection_id !== undefined ? [['collection', e.related_collection_id]] : [])]
    case 'proxy': return [['proxies', e.collection_id], ['proxy', e.proxy_id], ['triggers']]
    case 'proxy_workflow': return [['proxies'], ['proxy', e.proxy_id], ['versions'], ['triggers']]
    case 'trigger_status': return [['triggers']]
    case 'policy': return [['policies']]
    case 'client': return [['clients']]
    case 'profile': return [['profiles', e.client_id]]
    case 'credential': return [['credentials']]
    default: return []
  }
}

export type StreamState = 'connecting' | 'live' | 'reconnecting'

/** Opens the stream for the signed-in tab; returns its state for the header. */
export function useEventStream (token: string | null, client: QueryClient): StreamState {
  const [state, setState] = useState<StreamState>('connecting')
  const lastId = useRef<string | null>(null)
  useEffect(() => {
    if (token === null) return
    let source: EventSource | null = null
    let retry: ReturnType<typeof setTimeout> | undefined
    let attempts = 0
    const open = () => {
      const q = new URLSearchParams({ access_token: token })
      if (lastId.current !== null) q.set('last_event_id', lastId.current)
      source = new EventSource(`/api/v1/events/stream?${q.toString()}`)
      source.onopen = () => { attempts = 0; setState('live') }
      source.onmessage = m => {
        if (m.lastEventId !== '') lastId.current = m.lastEventId
        const e = JSON.parse(m.data) as ChangeEvent
        for (const key of staleKeys(e)) void client.invalidateQueries({ queryKey: key.filter(k => k !== undefined) })
        for (const l of listeners) l(e)
      }
      source.addEventListener('resync', () => { void client.invalidateQueries() })
      source.onerror = () => {
        setState('reconnecting')
        if (source?.readyState !== EventSource.CLOSED) return
        // Closed for good (an error answer): reopen ourselves, backing off up to 10 s.
        retry = setTimeout(open, Math.min(10_000, 500 * 2 ** attempts++))
      }
    }
    open()
    return () => { clearTimeout(retry); source?.close() }
  }, [token, client])
  return state
}

/** Calls `fn` for every change event while the component is mounted. */
export function useChangeEvents (fn: Listener): void {
  const ref = useRef(fn)
  ref.current = fn
  useEffect(() => {
    const l: Listener = e => ref.current(e)
    listeners.add(l)
    return () => { listeners.delete(l) }
  }, [])
}

/** A remote change to one open record: `changed` after an update or status change, `deleted` after a delete. */
export function useRemoteRecord (kind: string, idField: keyof ChangeEvent, id: string | null) {
  const [changed, setChanged] = useState(false)
  const [deleted, setDeleted] = useState(false)
  useChangeEvents(e => {
    if (id === null || e.resource_kind !== kind || e[idField] !== id) return
    if (e.operation === 'deleted') setDeleted(true)
    else if (e.operation === 'updated' || e.operation === 'status_changed') setChanged(true)
  })
  return { changed, deleted, clear: () => setChanged(false) }
}
