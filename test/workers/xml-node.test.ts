import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import { chain, task } from '../helpers/workflow-task.js'

const xml = (settings: Record<string, unknown>, trigger: unknown) =>
  runWorkflow(task(chain([{ id: 'x', name: 'parse', type: 'xml_node', settings }]), { trigger_output: trigger }))

t.test('xml_to_json: elements, repeated elements as lists, attributes, entities; values stay text', async t => {
  const r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' },
    { body: '<?xml version="1.0"?><order id="7"><item sku="a">01</item><item sku="b">2 &amp; 3</item><note/></order>' })
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { output: { order: { item: [{ '#text': '01', '@_sku': 'a' }, { '#text': '2 & 3', '@_sku': 'b' }], note: '', '@_id': '7' } } })
})

t.test('unwrap_soap gives the Body content without prefixes', async t => {
  const soap = '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header/><soap:Body><m:GetPriceResponse xmlns:m="https://x"><m:Price>1.90</m:Price></m:GetPriceResponse></soap:Body></soap:Envelope>'
  let r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}', unwrap_soap: true }, { body: soap })
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { output: { GetPriceResponse: { Price: '1.90' } } })
  r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}', unwrap_soap: true }, { body: '<a><b/></a>' })
  t.match(r.error?.message, /not a SOAP Envelope with a Body/)
})

t.test('malformed XML, oversize input, wrong source type, unknown mode are errors naming the node', async t => {
  let r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' }, { body: '<a><b></a>' })
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'x')
  t.match(r.error?.message, /XML node 'parse': the XML is malformed \(line 1, column \d+\)/)
  r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' }, { body: 'not xml at all' })
  t.match(r.error?.message, /malformed/)
  r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' }, { body: `<a>${'x'.repeat(1024 * 1024)}</a>` })
  t.match(r.error?.message, /larger than 1048576 bytes/)
  r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' }, { body: { a: 1 } })
  t.match(r.error?.message, /source must be XML text/)
  r = await xml({ mode: 'yaml', source: 'x' }, {})
  t.match(r.error?.message, /mode must be xml_to_json or json_to_xml/)
})

t.test('entity bombs stay small and external entities are refused', async t => {
  const lol = ['<!ENTITY l0 "lol">']
  for (let i = 1; i <= 6; i++) lol.push(`<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`)
  const bomb = `<?xml version="1.0"?><!DOCTYPE b [${lol.join('')}]><b>&l6;</b>`
  let r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' }, { body: bomb })
  t.ok(r.status === 'error' || JSON.stringify(r.response?.body).length < 200_000, 'a billion laughs does not expand')
  r = await xml({ mode: 'xml_to_json', source: '{{ trigger.body }}' }, { body: '<?xml version="1.0"?><!DOCTYPE f [<!ENTITY x SYSTEM "file:///etc/passwd">]><f>&x;</f>' })
  t.equal(r.status, 'error')
  t.match(r.error?.message, /XML node 'parse'/)
  t.notMatch(JSON.stringify(r), /root:/, 'no file content')
})

t.test('json_to_xml: objects, lists, attributes, escaping; names are checked', async t => {
  let r = await xml({ mode: 'json_to_xml', source: '{{ trigger.doc }}' }, { doc: { order: { '@_id': '7', item: ['a<b', 'c'], note: { '#text': 'x & y', '@_lang': 'en' } } } })
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.equal((r.response?.body as any).output, '<order id="7"><item>a&lt;b</item><item>c</item><note lang="en">x &amp; y</note></order>')
  r = await xml({ mode: 'json_to_xml', source: '{"a": {"b": 1}}' }, {})
  t.equal((r.response?.body as any).output, '<a><b>1</b></a>', 'JSON text is accepted')
  r = await xml({ mode: 'json_to_xml', source: '{{ trigger.doc }}' }, { doc: { 'a><script': 1 } })
  t.match(r.error?.message, /cannot be an XML element or attribute name/)
  r = await xml({ mode: 'json_to_xml', source: '{{ trigger.doc }}' }, { doc: [1, 2] })
  t.match(r.error?.message, /source must be an object/)
  // Round trip.
  r = await runWorkflow(task(chain([
    { id: 'a', name: 'toXml', type: 'xml_node', settings: { mode: 'json_to_xml', source: '{{ trigger.doc }}' } },
    { id: 'b', name: 'back', type: 'xml_node', settings: { mode: 'xml_to_json', source: '{{ toXml.output }}' } }
  ]), { trigger_output: { doc: { list: { v: ['1', '2'], '@_n': '2' } } } }))
  t.same(r.response?.body, { output: { list: { v: ['1', '2'], '@_n': '2' } } })
})
