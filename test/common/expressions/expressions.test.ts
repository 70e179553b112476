import t from 'tap'
import { compileTemplate, compileSettings, ExpressionError } from '../../../src/common/expressions/template.js'
import { workflowScope } from '../../../src/common/expressions/scope.js'

const scope = workflowScope({
  trigger: { request: { method: 'POST', path: '/orders/7', path_params: { id: '7' }, query: { q: 'x' }, headers: {}, body: { note: '{{ trigger.params.id }}', qty: 3 } } },
  byName: new Map<string, unknown>([
    ['fetch', { response: { status: 404, headers: {}, body: { name: 'Ada', tags: ['a', 'b'] } }, timedOut: false }],
    ['shape', { output: { total: 12.5 } }]
  ]),
  byId: new Map<string, unknown>([['n1', { response: { status: 404 } }], ['http_trigger', { request: { path_params: { id: '7' } } }]]),
  workflow: { id: 'wf1', name: 'orders' },
  execution: { id: 'ex1' },
  inputs: [{ a: 1 }, { a: 2 }],
  loop: { item: { sku: 'k1' }, index: 2, loop: { total: 5 } }
})
const ev = (s: string) => compileTemplate(s)(scope)

t.test('the spec forms', async t => {
  t.equal(ev('{{trigger.params.id}}'), '7')
  t.equal(ev('{{fetch.response.status}}'), 404, 'a whole-value expression keeps its type')
  t.same(ev('{{ fetch.response.body }}'), { name: 'Ada', tags: ['a', 'b'] })
  t.equal(ev('{{fetch.response.body.name}}'), 'Ada')
  t.equal(ev('{{fetch.timedOut}}'), false)
  t.same(ev('{{shape.output}}'), { total: 12.5 })
  t.same(ev("{{ $json['n1'] }}"), { response: { status: 404 } })
  t.equal(ev("{{ $json['$item'].sku }}"), 'k1')
  t.equal(ev("{{ $json['$index'] }}"), 2)
  t.equal(ev("{{ $json['$loop'].total }}"), 5)
  t.equal(ev('{{ $item }}'), undefined, 'bare $item is not provided')
  t.equal(ev('{{ $workflow.id }}'), 'wf1')
  t.equal(ev('{{ $execution.id }}'), 'ex1')
  t.same(ev('{{ $input.all() }}'), [{ a: 1 }, { a: 2 }])
  t.same(ev('{{ $input.first().a }}'), 1)
  t.equal(ev("{{ $json['http_trigger'].request.path_params.id }}"), '7')
  t.equal(ev("{{ $node['fetch'].response.status }}"), 404)
})

t.test('operators, functions, text', async t => {
  t.equal(ev('Order {{trigger.params.id}} is {{fetch.response.status}}'), 'Order 7 is 404', 'embedded expressions make a string')
  t.equal(ev('{{ fetch.response.status >= 400 && fetch.response.status < 500 }}'), true)
  t.equal(ev("{{ fetch.response.status == '404' }}"), true)
  t.equal(ev("{{ fetch.response.status === '404' }}"), false)
  t.equal(ev("{{ fetch.timedOut ? 'slow' : 'fast' }}"), 'fast')
  t.equal(ev('{{ (1 + 2) * 3 - 4 / 2 % 3 }}'), 7)
  t.equal(ev("{{ 'a' + 1 }}"), 'a1')
  t.equal(ev('{{ !fetch.timedOut }}'), true)
  t.equal(ev('{{ missing.thing ?? "fallback" }}'), 'fallback')
  t.equal(ev('{{ fetch?.response?.nope?.deeper }}'), undefined)
  t.equal(ev('{{ fetch.response.body.name.toUpperCase() }}'), 'ADA')
  t.equal(ev("{{ fetch.response.body.tags.join('|') }}"), 'a|b')
  t.equal(ev('{{ fetch.response.body.tags.length }}'), 2)
  t.equal(ev('{{ Math.max(1, 5, 3) }}'), 5)
  t.equal(ev('{{ JSON.stringify(shape.output) }}'), '{"total":12.5}')
  t.equal(ev('{{ Number("42") + 1 }}'), 43)
  t.equal(ev('plain text'), 'plain text')
  t.same(compileSettings({ url: 'http://x/{{trigger.params.id}}', n: '{{shape.output.total}}', list: ['{{fetch.response.status}}', 1] })(scope),
    { url: 'http://x/7', n: 12.5, list: [404, 1] })
})

t.test('data is never evaluated and prototypes are out of reach', async t => {
  t.equal(ev('{{ trigger.request.body.note }}'), '{{ trigger.params.id }}', 'a {{ }} inside data stays text')
  t.throws(() => ev('{{ trigger.__proto__ }}'), { name: 'ExpressionError' })
  t.throws(() => ev("{{ trigger['constructor'] }}"), { name: 'ExpressionError' })
  t.throws(() => ev("{{ fetch.response.body.name['constructor']['constructor']('return process')() }}"), { name: 'ExpressionError' })
  t.throws(() => ev('{{ process.exit(1) }}'), { name: 'ExpressionError' }, 'unknown functions cannot be called')
  t.throws(() => ev('{{ constructor.keys(trigger) }}'), { name: 'ExpressionError' })
  t.throws(() => ev("{{ fetch.response.body.name.constructor('x') }}"), { name: 'ExpressionError' })
  t.equal(ev('{{ toString }}'), undefined, 'inherited names are not roots')
})

t.test('parse errors name the position', async t => {
  t.throws(() => compileTemplate('{{ a + }}'), /ends too early/)
  t.throws(() => compileTemplate("{{ 'open }}"), /not closed/)
  t.throws(() => compileTemplate('{{ a # b }}'), /Unexpected character '#'/)
  try { compileTemplate('x {{ a ) }}'); t.fail('should throw') } catch (err) {
    t.ok(err instanceof ExpressionError)
    t.type((err as ExpressionError).position, 'number')
  }
})

t.test('every function and method in the whitelist', async t => {
  t.equal(ev('{{ String(fetch.response.status) }}'), '404')
  t.equal(ev('{{ String(missing) }}'), '')
  t.equal(ev('{{ Boolean(0) }}'), false)
  t.match(ev('{{ now() }}') as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/)
  t.same([ev('{{ isEmpty("") }}'), ev('{{ isEmpty(fetch.response.body.tags) }}'), ev('{{ isEmpty(shape.output) }}'), ev('{{ isEmpty(missing) }}')], [true, false, false, true])
  t.same([ev('{{ Math.min(3, 1, 2) }}'), ev('{{ Math.round(2.5) }}'), ev('{{ Math.floor(2.7) }}'), ev('{{ Math.ceil(2.1) }}'), ev('{{ Math.abs(-4) }}')], [1, 3, 2, 3, 4])
  t.same(ev('{{ JSON.parse(\'{"a":[1]}\') }}'), { a: [1] })
  t.throws(() => ev("{{ JSON.parse('nope') }}"), /not JSON/)
  t.equal(ev("{{ '  Ada  '.trim().toLowerCase() }}"), 'ada')
  t.same([ev("{{ 'gatehouse'.startsWith('gate') }}"), ev("{{ 'gatehouse'.endsWith('house') }}"), ev("{{ 'gatehouse'.includes('teh') }}")], [true, true, true])
  t.same(ev("{{ 'a,b,c'.split(',') }}"), ['a', 'b', 'c'])
  t.same([ev("{{ 'gatehouse'.slice(4) }}"), ev("{{ 'gatehouse'.slice(0, 4) }}"), ev("{{ 'gatehouse'.indexOf('h') }}")], ['house', 'gate', 4])
  t.equal(ev("{{ 'a-b-c'.replace('-', '+') }}"), 'a+b+c', 'replace changes every occurrence, literally')
  t.equal(ev("{{ 'x'.length }}"), 1)
  t.same([ev("{{ fetch.response.body.tags.includes('b') }}"), ev('{{ fetch.response.body.tags.slice(1) }}'), ev("{{ fetch.response.body.tags.indexOf('b') }}")], [true, ['b'], 1])
  t.same([ev('{{ fetch.response.body.tags.first() }}'), ev('{{ fetch.response.body.tags.last() }}'), ev('{{ fetch.response.body.tags[0] }}')], ['a', 'b', 'a'])
  t.throws(() => ev('{{ fetch.response.body.tags.map(1) }}'), { name: 'ExpressionError' }, 'methods outside the list are refused')
  t.throws(() => ev('{{ Math.random() }}'), { name: 'ExpressionError' })
})

t.test('operators not covered above', async t => {
  t.same([ev('{{ 7 % 3 }}'), ev('{{ -fetch.response.status }}'), ev('{{ 2 <= 2 }}'), ev('{{ 1 > 2 }}'), ev('{{ 1 < 2 }}')], [1, -404, true, false, true])
  t.same([ev("{{ fetch.response.status != '404' }}"), ev("{{ fetch.response.status !== '404' }}"), ev('{{ fetch.response.status === 404 }}')], [false, true, true])
  t.same([ev('{{ 0 || "zero" }}'), ev('{{ 0 ?? "zero" }}'), ev('{{ null ?? "n" }}'), ev('{{ true && "yes" }}')], ['zero', 0, 'n', 'yes'])
  t.equal(ev("{{ fetch?.['response']?.status }}"), 404, 'optional bracket access')
  t.equal(ev('{{ missing?.a.b }}'), undefined)
  t.equal(ev('{{ 1 ? 2 ? "a" : "b" : "c" }}'), 'a', 'nested ternary')
  t.equal(ev('{{ 2 + 3 * 4 }}'), 14, 'precedence')
  t.equal(ev('{{ "it\\\'s" }}'), "it's", 'escapes in strings')
  t.equal(ev('{{ 1.5e2 }}'), 150)
  t.same(ev('{{ null }}'), null)
  t.equal(ev('{{ trigger.request.query.q }}'), 'x')
  t.equal(ev('{{ trigger.request.method }}'), 'POST')
  t.equal(ev('{{ trigger.request.body.qty * 2 }}'), 6)
})
