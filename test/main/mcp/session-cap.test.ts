/**
 * MCP sessions per instance (MCP_SESSIONS_MAX) beside the cap per user: past it a new session is
 * refused with 503, Retry-After and a JSON-RPC error saying why (the SDK client's connect fails
 * with that sentence), the sessions already open keep working, and ending one makes room.
 */
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.test('an instance opens at most MCP_SESSIONS_MAX sessions', async t => {
  const s = await start(loadConfig({
    GATEWAY_THREADS: '1',
    PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '',
    MCP_SESSIONS_MAX: '3', MCP_SESSIONS_PER_USER: '2'
  }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const url = `http://127.0.0.1:${s.managementPort}/api/v1/mcp`
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
  const post = async (token: string, body: unknown = init, sid?: string) => await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close', ...(sid !== undefined ? { 'mcp-session-id': sid } : {}) },
    body: JSON.stringify(body)
  })
  const open = async (token: string) => { const r = await post(token); await r.text(); t.equal(r.status, 200); return r.headers.get('mcp-session-id')! }
  const [alice, bob, carol] = await Promise.all([s.issueToken!('alice', 'viewer'), s.issueToken!('bob', 'viewer'), s.issueToken!('carol', 'viewer')])

  const a1 = await open(alice)
  await open(alice)
  // The per-user cap still applies first: alice's third ends her oldest, the count stays 2.
  await open(alice)
  const b1 = await open(bob)

  const refused = await post(carol)
  t.equal(refused.status, 503, 'a fourth live session on this instance is refused')
  t.equal(refused.headers.get('retry-after'), '30')
  t.match(await refused.json(), { jsonrpc: '2.0', error: { code: -32000, message: /as many MCP sessions as it may \(MCP_SESSIONS_MAX\); sessions already open keep working/ } })
  // What an agent sees through the SDK's client.
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' })
  await t.rejects(client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${carol}` } } })), /MCP_SESSIONS_MAX/)

  const list = await post(bob, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, b1)
  t.equal(list.status, 200, 'an open session keeps working')
  await list.text()
  t.equal((await post(alice, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, a1)).status, 404, "alice's oldest was ended by her own cap")

  // Ending a session makes room.
  const ended = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${bob}`, 'mcp-session-id': b1, connection: 'close' } })
  t.equal(ended.status, 204)
  await open(carol)
})
