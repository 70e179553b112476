import type { Page } from '../../common/types.js'
import type { RequestRecord } from '../observability/types.js'
import { iso, page, whereOf, type PageQuery } from './rows.js'
import type { Queryable, Store } from './types.js'

// One JSON parameter per batch, unpacked by the database: binding 13 parameters per row cost the
// gateway's thread more than the insert itself (pg serialises each). As `json`, not `jsonb`: the
// server reads the text once instead of building a jsonb value first (9.5-11 µs of its CPU a
// record instead of 12.5-15: node bench/request-log-rows.mjs).
const INSERT = `INSERT INTO request_logs (occurred_at, request_id, collection_id, proxy_id, client_id, profile_id, method, path, status, duration_ms, upstream_ms, bytes_in, bytes_out)
SELECT to_timestamp(r."time" / 1000.0), r.request_id, r.collection_id, r.proxy_id, r.client_id, r.profile_id, r.method, left(r.path, 2048), r.status, r.duration_ms, r.upstream_ms,
  least(r.bytes_in, 2000000000)::integer, least(r.bytes_out, 2000000000)::integer
FROM json_to_recordset($1::json) AS r("time" double precision, request_id text, collection_id text, proxy_id text, client_id text, profile_id text,
  method text, path text, status integer, duration_ms double precision, upstream_ms double precision, bytes_in bigint, bytes_out bigint)`

/** One statement per batch: the INSERT above. (The embedded store keeps its request log in files: observability/request-log-files.ts.) */
export async function insertRequestLogs (store: Queryable, records: RequestRecord[]): Promise<void> {
  if (records.length === 0) return
  await store.query(INSERT, [jsonRows(records)])
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
  collection_id?: string, proxy_id?: string, client_id?: string, profile_id?: string, status?: number, method?: string, since?: string, until?: string
}

/** Newest first unless `pq.order` is 'asc'. */
export async function listRequestLogs (q: Queryable, pq: PageQuery & { order?: 'asc' | 'desc' }, f: RequestLogFilter): Promise<Page<RequestLogItem>> {
  const { where, params } = whereOf([
    ['collection_id = ?', f.collection_id], ['proxy_id = ?', f.proxy_id], ['client_id = ?', f.client_id], ['profile_id = ?', f.profile_id],
    ['status = ?', f.status], ['method = ?', f.method], ['occurred_at >= ?', f.since], ['occurred_at < ?', f.until]
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
    bytes_out: Number(r.bytes_out)
  }), pq.order ?? 'desc')
}

export async function pruneRequestLogs (store: Store, olderThan: Date): Promise<number> {
  const r = await store.query('DELETE FROM request_logs WHERE occurred_at < $1', [olderThan.toISOString()])
  return r.rowCount
}
