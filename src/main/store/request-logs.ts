import type { Page } from '../../common/types.js'
import { loggedPath, type RequestRecord } from './request-record.js'
import { iso, page, whereOf, type PageQuery } from './rows.js'
import type { Queryable, Store } from './types.js'

// On PostgreSQL a batch is one COPY in COPY's text format: the least work for the server per row
// (about 7 µs of its CPU a record with the table's indexes, against 9-11 µs for the INSERT below
// reading one json parameter, and 12.5-15 µs as jsonb: node bench/request-log-rows.mjs), which
// shares the machine's cores with the gateway. Stores without COPY (the embedded store's table,
// kept for the take-over of an earlier version's rows) get the INSERT: one JSON parameter a
// batch, unpacked by the database (binding 13 parameters a row cost the gateway's thread more
// than the insert itself).
const COPY = 'COPY request_logs (occurred_at, request_id, collection_id, proxy_id, client_id, profile_id, method, path, status, duration_ms, upstream_ms, bytes_in, bytes_out, trace_id) FROM STDIN'
const INSERT = `INSERT INTO request_logs (occurred_at, request_id, collection_id, proxy_id, client_id, profile_id, method, path, status, duration_ms, upstream_ms, bytes_in, bytes_out, trace_id)
SELECT to_timestamp(r."time" / 1000.0), r.request_id, r.collection_id, r.proxy_id, r.client_id, r.profile_id, r.method, left(r.path, 2048), r.status, r.duration_ms, r.upstream_ms,
  least(r.bytes_in, 2000000000)::integer, least(r.bytes_out, 2000000000)::integer, r.trace_id
FROM json_to_recordset($1::json) AS r("time" double precision, request_id text, collection_id text, proxy_id text, client_id text, profile_id text,
  method text, path text, status integer, duration_ms double precision, upstream_ms double precision, bytes_in bigint, bytes_out bigint, trace_id text)`

/** Writes a batch in one statement (COPY where the store has it): every record of it or none. */
export async function insertRequestLogs (store: Queryable & Pick<Store, 'copyFrom'>, records: RequestRecord[]): Promise<void> {
  if (records.length === 0) return
  if (store.copyFrom !== undefined) await store.copyFrom(COPY, copyRows(records))
  else await store.query(INSERT, [jsonRows(records)])
}

const MAX_BYTES = 2_000_000_000
// What COPY's text format cannot carry as it is: its delimiters, its escape, and NUL (which no
// PostgreSQL text value holds: it is left out, as the INSERT leaves it out).
const ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\', '\0': '' }
const SPECIALS = /[\t\n\r\\\0]/g

function text (s: string): string {
  return s.replace(SPECIALS, c => ESCAPES[c]!) // SPECIALS matches only ESCAPES' keys
}

function nullable (s: string | null | undefined): string {
  return s === null || s === undefined ? '\\N' : text(s)
}

/** The batch in COPY's text format: a line per record, tab-separated, `\N` for null. */
function copyRows (records: RequestRecord[]): string {
  let out = ''
  for (const r of records) {
    let p = r.path
    if (p.includes('\0')) p = p.replaceAll('\0', '')
    p = loggedPath(p)
    out += `${new Date(r.time).toISOString()}\t${text(r.request_id)}\t${nullable(r.collection_id)}\t${nullable(r.proxy_id)}\t${nullable(r.client_id)}\t` +
      `${nullable(r.profile_id)}\t${text(r.method)}\t${text(p)}\t${r.status}\t${r.duration_ms}\t${r.upstream_ms ?? '\\N'}\t` +
      `${Math.min(r.bytes_in, MAX_BYTES)}\t${Math.min(r.bytes_out, MAX_BYTES)}\t${r.trace_id == null ? '\\N' : text(r.trace_id)}\n`
  }
  return out
}

/** The batch as JSON; a NUL in a string (which PostgreSQL refuses, failing the whole batch) is left out. */
function jsonRows (records: RequestRecord[]): string {
  const json = JSON.stringify(records)
  if (!json.includes('\\u0000')) return json
  return JSON.stringify(records, (_k, v: unknown) => typeof v === 'string' ? v.replaceAll('\0', '') : v)
}

/** Where the request log is kept: the table on PostgreSQL, files beside the embedded store (observability/request-log-files.ts). */
export interface RequestLogStore {
  insert: (records: RequestRecord[]) => Promise<void>
  /** Newest first unless `pq.order` is 'asc'. */
  list: (pq: PageQuery & { order?: 'asc' | 'desc' }, f: RequestLogFilter) => Promise<Page<RequestLogItem>>
  /** Removes records older than `olderThan`; returns how many. */
  prune: (olderThan: Date) => Promise<number>
  close?: () => Promise<void>
}

/** One request as GET /api/v1/request-logs lists it: the record with its time in ISO 8601. */
export type RequestLogItem = Omit<RequestRecord, 'time' | 'refused'> & { time: string }

/** The request_logs table of a store. */
export function tableRequestLog (store: Store): RequestLogStore {
  return {
    insert: async records => { await insertRequestLogs(store, records) },
    list: async (pq, f) => await listRequestLogs(store, pq, f),
    prune: async olderThan => await pruneRequestLogs(store, olderThan)
  }
}

export interface RequestLogFilter {
  collection_id?: string, proxy_id?: string, client_id?: string, profile_id?: string, status?: number, method?: string, since?: string, until?: string, trace_id?: string
}

/** Newest first unless `pq.order` is 'asc'. */
export async function listRequestLogs (q: Queryable, pq: PageQuery & { order?: 'asc' | 'desc' }, f: RequestLogFilter): Promise<Page<RequestLogItem>> {
  const { where, params } = whereOf([
    ['collection_id = ?', f.collection_id], ['proxy_id = ?', f.proxy_id], ['client_id = ?', f.client_id], ['profile_id = ?', f.profile_id],
    ['status = ?', f.status], ['method = ?', f.method], ['occurred_at >= ?', f.since], ['occurred_at < ?', f.until], ['trace_id = ?', f.trace_id]
  ])
  return await page(q, `SELECT * FROM request_logs WHERE ${where}`, params, pq, (r: any) => ({
    time: iso(r.occurred_at),
    request_id: r.request_id,
    collection_id: r.collection_id,
    proxy_id: r.proxy_id,
    client_id: r.client_id,
    profile_id: r.profile_id,
    method: r.method,
    path: r.path,
    status: Number(r.status),
    duration_ms: Number(r.duration_ms),
    upstream_ms: r.upstream_ms === null ? null : Number(r.upstream_ms),
    bytes_in: Number(r.bytes_in),
    bytes_out: Number(r.bytes_out),
    trace_id: r.trace_id ?? null
  }), pq.order ?? 'desc')
}

export async function pruneRequestLogs (store: Store, olderThan: Date): Promise<number> {
  const r = await store.query('DELETE FROM request_logs WHERE occurred_at < $1', [olderThan.toISOString()])
  return r.rowCount
}
