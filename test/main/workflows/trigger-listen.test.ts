import t from 'tap'
import { reader } from '../../helpers/sse.js'
import { startService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })

t.test('trigger test-listen captures the next gateway request, even while the workflow is disabled', async t => {
  const w = await startService(t, 'embedded')
  const p = await w.proxy('/hook')
  const wf = `/workflows/${p.workflow_id as string}`
  const url = `${w.gateway}${p.base as string}/hook`
  const hook = async () => await fetch(url, { method: 'POST', headers: { connection: 'close', 'content-type': 'application/json' }, body: '{"order":42}' })
  await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
    workflow: {
      nodes: [n('trg', 'http_trigger'), n('reply', 'response_node', { status: 202, body: { got: '{{trigger.request.body.order}}' } })],
      edges: [e('trg', 'reply')]
    }
  })
  t.equal((await hook()).status, 502, 'disabled: the proxy forwards to its (unreachable) backend')

  const stream = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${w.s.managementPort}/api/v1${path}`, { headers: { authorization: `Bearer ${await w.s.issueToken!('ed', 'editor')}`, connection: 'close' } })
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^text\/event-stream/)
    const sse = reader(res)
    return async () => {
      const frames: Array<{ event?: string, data: any }> = []
      for (let i = 0; i < 30; i++) {
        const f = await sse.nextData()
        if (f === undefined) break
        frames.push({ event: f.event, data: JSON.parse(f.data.join('\n')) })
      }
      return frames
    }
  }

  let r = await w.api('POST', `${wf}/trigger-test/listen`, { timeout_seconds: 60 })
  t.equal(r.status, 200)
  t.match(r.body, { workflow_id: p.workflow_id, proxy_id: p.id, trigger_type: 'http_trigger', status: 'waiting', gateway: { methods: ['POST'], path: `${p.base as string}/hook` } })
  const session = r.body
  const frames = await stream(session.stream.replace('/api/v1', ''))

  const captured = await hook()
  t.equal(captured.status, 202, 'the captured request is answered by the workflow')
  t.same(await captured.json(), { got: 42 })
  const seen = await frames()
  t.same(seen.map(f => f.event), ['listening', 'captured', 'node_started', 'node_finished', 'node_started', 'node_finished', 'execution'], 'the stream ends after the run')
  t.match(seen[1]?.data, { trigger_output: { request: { method: 'POST', body: { order: 42 } } } })
  t.match(seen.at(-1)!.data, { mode: 'test', status: 'success', response: { status: 202 } })

  // only the next request: afterwards the proxy forwards again (503 while the route table is being restored)
  let after = 0
  for (let i = 0; i < 100; i++) {
    after = (await hook()).status
    if (after !== 503) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.equal(after, 502)
  t.equal((await w.api('GET', `${wf}/trigger-test/${session.id as string}/stream`)).status, 200, 'an ended session stays readable for a while')

  // stopping and expiry
  r = await w.api('POST', `${wf}/trigger-test/listen`, {})
  const stopped = await stream(r.body.stream.replace('/api/v1', ''))
  t.equal((await w.api('DELETE', `${wf}/trigger-test/${r.body.id as string}`)).status, 204)
  t.same((await stopped()).map(f => f.event), ['listening', 'cancelled'])
  r = await w.api('POST', `${wf}/trigger-test/listen`, { timeout_seconds: 1 })
  const expired = await stream(r.body.stream.replace('/api/v1', ''))
  const ex = await expired()
  t.same(ex.map(f => f.event), ['listening', 'expired'])
  t.match(ex[1]?.data.message, /No request reached/)

  // refusals
  t.equal((await w.api('POST', `${wf}/trigger-test/listen`, {}, 'viewer')).status, 403)
  t.equal((await w.api('POST', '/workflows/nope/trigger-test/listen', {})).status, 404)
  t.equal((await w.api('GET', `${wf}/trigger-test/nope/stream`)).status, 404)
  t.equal((await w.api('POST', `${wf}/trigger-test/listen`, { timeout_seconds: 0 })).status, 400)
  const draft = (await w.api('POST', '/proxies', { collection_id: p.collection_id, name: 'draft', methods: ['GET'], path: '/draft' }, 'admin')).body
  await w.api('PUT', `/proxies/${draft.id as string}/workflow`, { workflow: { nodes: [n('trg', 'http_trigger')], edges: [] } })
  r = await w.api('POST', `/workflows/${draft.workflow_id as string}/trigger-test/listen`, {})
  t.equal(r.status, 409)
  t.match(r.body.error.message, /draft/)
  const manual = await w.proxy('/manual')
  await w.api('PUT', `/proxies/${manual.id as string}/workflow`, { workflow: { nodes: [n('go', 'manual_trigger')], edges: [] } })
  r = await w.api('POST', `/workflows/${manual.workflow_id as string}/trigger-test/listen`, {})
  t.equal(r.status, 400)
  t.match(r.body.error.message, /http_trigger/)
})
