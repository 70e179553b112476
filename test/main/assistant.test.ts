/**
 * The assistant against a scripted OpenAI-compatible server on loopback that issues tool calls:
 * a read-only call that runs at once, a change that waits for the user's approval (approved and
 * declined), a change refused by the user's role through the management MCP, the thread saved per
 * user, a stale confirmation refused, the 503 when unconfigured; and the developer-portal
 * assistant calling published APIs through the gateway MCP with the developer's profile.
 */
import t from 'tap'
import { startAssistantService as startService, sseEvents as events } from '../helpers/assistant.js'
import { startBackend } from '../helpers/gateway.js'
import { scriptedModel } from '../helpers/model.js'

t.test('the management assistant acts through the management MCP as the signed-in user', async t => {
  const model = await scriptedModel(t)
  const s = await startService(t, model.url)
  const base = `http://127.0.0.1:${s.managementPort}/api/v1`
  const eve = await s.issueToken!('eve', 'editor')
  const victor = await s.issueToken!('victor', 'viewer')
  const chat = async (token: string, body: unknown) => {
    const r = await fetch(`${base}/copilot/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const text = await r.text()
    return { status: r.status, type: r.headers.get('content-type'), text, events: r.status === 200 ? events(text) : [] }
  }
  const collections = async () => ((await (await fetch(`${base}/collections`, { headers: { authorization: `Bearer ${eve}` } })).json()) as any).items as any[]

  // A read-only call runs at once; the change that follows waits for approval.
  model.script.push(
    { tool_calls: [{ name: 'list_collections', arguments: {} }] },
    { content: 'I will create it.', tool_calls: [{ name: 'create_collection', arguments: { name: 'orders', base_path: '/orders', upstream_url: 'http://127.0.0.1:9' } }] }
  )
  const first = await chat(eve, { message: 'Publish an orders API at /orders' })
  t.equal(first.status, 200)
  t.match(first.type, /text\/event-stream/)
  t.match(first.events.map(e => e.event), ['tool_call', 'tool_result', 'message', 'confirmation_required', 'done'])
  t.match(first.events[1]?.data, { tool: 'list_collections', is_error: false })
  const waiting = first.events[3]?.data
  t.match(waiting, { tool: 'create_collection', arguments: { name: 'orders', base_path: '/orders' }, action_id: /\S+/ })
  t.same(await collections(), [], 'nothing is created before the user approves')
  t.equal(model.seen[0].authorization, 'Bearer sk-test', 'the model API gets ASSISTANT_API_KEY')
  t.equal(model.seen[0].body.model, 'scripted-1')
  const offered = (model.seen[0].body.tools as any[]).map(x => x.function.name)
  t.ok(offered.includes('create_collection') && offered.includes('workflow_list_nodes') && offered.length >= 57, `${offered.length} management tools offered`)
  t.match(model.seen[1].body.messages.at(-1), { role: 'tool', content: /"items"/ }, 'the read-only result went back to the model')

  model.script.push({ content: 'Done: orders is live at /orders.' })
  const approved = await chat(eve, { confirm: { action_id: waiting.action_id, approve: true } })
  t.match(approved.events.map(e => e.event), ['tool_call', 'tool_result', 'message', 'done'])
  t.match(approved.events[1]?.data, { tool: 'create_collection', is_error: false })
  t.match(await collections(), [{ name: 'orders', base_path: '/orders' }], 'approved: the collection exists')
  const audit = ((await (await fetch(`${base}/audit-logs?limit=20`, { headers: { authorization: `Bearer ${await s.issueToken!('root', 'admin')}` } })).json()) as any).items as any[]
  t.ok(audit.some(a => a.actor === 'eve' || a.sub === 'eve' || JSON.stringify(a).includes('"eve"')), 'the change is audited under the user, not the assistant')

  const stale = await chat(eve, { confirm: { action_id: waiting.action_id, approve: true } })
  t.equal(stale.status, 409, 'a decided action cannot be confirmed twice')
  t.match(JSON.parse(stale.text), { error: { code: 'conflict' } })

  // Declined: the call is not run and the model is told so.
  model.script.push({ tool_calls: [{ name: 'delete_collection', arguments: { id: (await collections())[0].id } }] }, { content: 'Kept it.' })
  const del = await chat(eve, { message: 'Delete orders' })
  const delAction = del.events.find(e => e.event === 'confirmation_required')!.data
  t.match(delAction, { tool: 'delete_collection' })
  const declined = await chat(eve, { confirm: { action_id: delAction.action_id, approve: false } })
  t.match(declined.events.map(e => e.event), ['tool_result', 'message', 'done'])
  t.match(declined.events[0]?.data, { is_error: true, content: 'Declined by the user.' })
  t.equal((await collections()).length, 1, 'declined: the collection is still there')

  // The thread is the user's, saved on the server.
  const thread = await (await fetch(`${base}/copilot/thread`, { headers: { authorization: `Bearer ${eve}` } })).json() as any
  t.equal(thread.title, 'Publish an orders API at /orders')
  t.ok(thread.messages.some((m: any) => m.role === 'tool') && thread.messages.some((m: any) => m.role === 'user' && m.content === 'Delete orders'))
  t.notOk(thread.metadata.pending, 'nothing waits any more')
  const victorsThread = await (await fetch(`${base}/copilot/thread`, { headers: { authorization: `Bearer ${victor}` } })).json() as any
  t.same(victorsThread.messages, [], 'another user has their own thread')

  // A viewer's approved change is refused by the management MCP's role check.
  model.script.push({ tool_calls: [{ name: 'create_collection', arguments: { name: 'x', base_path: '/x', upstream_url: 'http://127.0.0.1:9' } }] }, { content: 'Your role does not allow that.' })
  const v1 = await chat(victor, { message: 'Create x' })
  const vAction = v1.events.find(e => e.event === 'confirmation_required')!.data
  const v2 = await chat(victor, { confirm: { action_id: vAction.action_id, approve: true } })
  t.match(v2.events[1]?.data, { tool: 'create_collection', is_error: true, content: /forbidden/ }, 'role refused on the tool call')
  t.equal((await collections()).length, 1)

  // Bad input.
  t.equal((await chat(eve, {})).status, 400)
  t.equal((await chat(eve, { message: 'x', extra: 1 })).status, 400)
})

t.test('without ASSISTANT_* the chat answers 503 saying what to set', async t => {
  const s = await startService(t, null)
  const token = await s.issueToken!('eve', 'editor')
  const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/copilot/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"message":"hi"}' })
  t.equal(r.status, 503)
  t.match(await r.json(), { error: { code: 'service_unavailable', message: /ASSISTANT_BASE_URL.*ASSISTANT_MODEL/ } })
  const p = await fetch(`http://127.0.0.1:${s.gatewayPort}/portal/api/assistant/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"hi"}' })
  t.equal(p.status, 503)
})

t.test('the developer-portal assistant calls published APIs with the developer profile', async t => {
  const model = await scriptedModel(t)
  const backend = await startBackend(t, (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, path: req.url })) })
  const s = await startService(t, model.url)
  const admin = await s.issueToken!('root', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const c = await api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: true })
  const items = await api('POST', '/proxies', { collection_id: c.id, name: 'items', methods: ['GET', 'POST'], path: '/items', status: 'published' })
  const cl = await api('POST', '/clients', { name: 'dev' })
  const prof = await api('POST', `/clients/${cl.id}/profiles`, { name: 'dev', auth_type: 'api_key', collection_ids: [c.id] })
  const creds = { authorization: `Bearer ${prof.credentials.api_key}`, 'x-client-id': cl.id, 'x-profile-id': prof.id }
  const chat = async (headers: Record<string, string>, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/portal/api/assistant/chat`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const text = await r.text()
    return { status: r.status, events: r.status === 200 ? events(text) : [], text }
  }

  model.script.push(
    { tool_calls: [{ name: 'execute_endpoint', arguments: { endpoint_id: items.id, method: 'GET' } }] },
    { tool_calls: [{ name: 'execute_endpoint', arguments: { endpoint_id: items.id, method: 'POST', body: { name: 'pen' } } }] }
  )
  const first = await chat(creds, { message: 'List items, then add a pen' })
  t.equal(first.status, 200, first.text)
  t.match(first.events.map(e => e.event), ['tool_call', 'tool_result', 'confirmation_required', 'done'])
  t.match(JSON.parse(first.events[1]?.data.content), { status: 200, body: { method: 'GET', path: '/items' } })
  t.equal(backend.seen.length, 1, 'the GET ran; the POST waits for the developer')
  const offered = (model.seen[0].body.tools as any[]).map(x => x.function.name).sort()
  t.same(offered, ['endpoint_details', 'execute_endpoint', 'list_collections', 'list_endpoints'])

  model.script.push({ content: 'Added.' })
  const second = await chat(creds, { confirm: { action_id: first.events[2]?.data.action_id, approve: true } })
  t.match(second.events.map(e => e.event), ['tool_call', 'tool_result', 'message', 'done'])
  t.match(backend.seen.at(-1), { method: 'POST', url: '/items' })

  const refused = await chat({ ...creds, authorization: 'Bearer gh_wrong' }, { message: 'hi' })
  t.equal(refused.status, 401, 'wrong profile credentials are refused before any thread is touched')
})
