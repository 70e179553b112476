import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import { chain, task } from '../helpers/workflow-task.js'

const code = (src: string, over = {}) => runWorkflow(task(chain([
  { id: 's', name: 'shape', type: 'set_node', settings: { values: { n: 2, list: [1, 2, 3] } } },
  { id: 'c', name: 'calc', type: 'code_node', settings: { code: src } }
]), over))

t.test('returns a JSON value computed from $json, $node, $input, $workflow, $execution', async t => {
  const r = await code(`
    const total = $json['s'].output.list.reduce((a, b) => a + b, 0) * $node['shape'].output.n
    return { total, first: $input.first().output.n, all: $input.all().length, wf: $workflow.id, ex: $execution.id, tpl: '{{ not a template }}' }`)
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { total: 12, first: 2, all: 1, wf: 'wf', ex: 'ex-1', tpl: '{{ not a template }}' })
})

t.test('await works; undefined becomes null; thrown errors name the node', async t => {
  let r = await code('const v = await Promise.resolve(41); return v + 1')
  t.same(r.response?.body, 42)
  r = await code('const x = 1')
  t.equal(r.status, 'success')
  t.equal(r.response?.body, null)
  r = await code("throw new TypeError('bad order')")
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'c')
  t.match(r.error?.message, /Code node 'calc' threw TypeError: bad order/)
  r = await code('return (')
  t.match(r.error?.message, /SyntaxError/)
  r = await code('return { f () {} , big: 10n }')
  t.match(r.error?.message, /not JSON-serialisable/)
})

t.test('an infinite loop is stopped after the time limit, and the worker stays usable', async t => {
  let r = await code('while (true) {}')
  t.equal(r.status, 'error')
  t.match(r.error?.message, /ran longer than 1000 ms and was stopped/)
  r = await code('for (;;) { try { while (true) {} } catch (e) {} }')
  t.match(r.error?.message, /ran longer than/, 'catching the interrupt does not help')
  r = await code('return 1 + 1')
  t.same(r.response?.body, 2)
})

t.test('the run deadline is the limit when it is nearer', async t => {
  const r = await code('while (true) {}', { deadline: Date.now() + 300 })
  t.not(r.status, 'success')
  t.match(r.error?.message, /ran longer than \d+ ms|deadline/)
})

t.test('a memory bomb is stopped at the memory limit', async t => {
  let r = await code("const a = []; while (true) a.push('x'.repeat(1e5) + a.length)")
  t.equal(r.status, 'error')
  t.match(r.error?.message, /used more than 32 MiB of memory/)
  r = await code("return 'x'.repeat(2 ** 28).length")
  t.match(r.error?.message, /memory/)
  r = await code('const f = () => f(); return f()')
  t.match(r.error?.message, /recursed too deeply/, 'deep recursion is a clear error')
  r = await code("let o = []; for (let i = 0; i < 200000; i++) o = [o]; return JSON.stringify(o).length")
  t.equal(r.status, 'error', 'deep recursion inside a builtin is stopped too')
  r = await code('const a = []; while (true) a.push(new ArrayBuffer(4e6))')
  t.match(r.error?.message, /memory/, 'large buffers count against the limit')
  r = await code('return [1, 2].map(x => x * 2)')
  t.same(r.response?.body, [2, 4], 'the next call runs normally')
})

t.test('escape attempts find nothing of the host', async t => {
  const probes: Record<string, string> = {
    process: 'return typeof process',
    require: 'return typeof require',
    module: 'return typeof module',
    globalThisProcess: 'return typeof globalThis.process',
    ctorProcess: "return (function () {}).constructor('return typeof process')()",
    ctorChain: "return this === undefined ? 'strict' : typeof this.constructor.constructor('return process')()",
    functionCtor: "return Function('return typeof globalThis.require')()",
    importFn: "try { await import('fs'); return 'imported' } catch (e) { return 'refused' }",
    fetch: 'return typeof fetch',
    timers: 'return typeof setTimeout',
    wasm: 'return typeof WebAssembly',
    buffer: 'return typeof Buffer'
  }
  for (const [name, src] of Object.entries(probes)) {
    const r = await code(src)
    if (r.status === 'success') t.ok(['undefined', 'refused', 'strict'].includes(r.response?.body as string), `${name}: ${String(r.response?.body)}`)
    else t.notMatch(r.error?.message, /imported/, `${name} fails inside the sandbox: ${r.error?.message}`)
  }
  const r = await code("globalThis.leak = 'x'; return 1")
  t.equal(r.status, 'success')
  const r2 = await code("return typeof globalThis.leak")
  t.same(r2.response?.body, 'undefined', 'nothing leaks from one call to the next')
})

t.test('inside a loop, the loop context is visible', async t => {
  const def = chain([
    { id: 's', name: 'shape', type: 'set_node', settings: { values: { list: [3, 4] } } },
    { id: 'l', name: 'each', type: 'loop_node', settings: { items: '{{ shape.output.list }}' } },
    { id: 'c', name: 'sq', type: 'code_node', settings: { code: "return { sq: $json['$item'] * $json['$item'], i: $json['$index'], total: $json['$loop'].total }" } }
  ], [{ id: 'back', source: 'c', target: 'l' }])
  const r = await runWorkflow(task(def))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { items: [{ sq: 9, i: 0, total: 2 }, { sq: 16, i: 1, total: 2 }] })
})

t.test('a promise that never settles and console.log', async t => {
  let r = await code('await new Promise(() => {}); return 1')
  t.equal(r.status, 'error')
  t.match(r.error?.message, /never settled/)
  r = await code("console.log('hello'); return 'logged'")
  t.same(r.response?.body, 'logged')
  r = await code('')
  t.match(r.error?.message, /needs code/)
})
