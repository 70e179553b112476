/**
 * code_node: `code` is the body of an (async) JavaScript function, run in
 * QuickJS compiled to WebAssembly (not node:vm, which is no sandbox). Each call
 * gets a fresh runtime with a memory limit and an interrupt handler at
 * min(1 s, the run's deadline), and nothing of the host: no process, require,
 * timers, network or file system. Data goes in and out as JSON text only:
 *
 *   host ── JSON text ──► QuickJS: $json, $node, $input.all()/first(), $workflow, $execution
 *   host ◄── JSON text ── return value (undefined → null) or the error's message
 *
 * The runtime is disposed after every call, so nothing leaks from one run to the next.
 * QuickJS is loaded on the node's first run: a worker (or the main thread, which
 * reads the description) that never meets a code node never loads it.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import type { QuickJSContext, QuickJSWASMModule } from 'quickjs-emscripten'
import { NodeError, type NodeContext, type NodeResult } from '../engine/types.js'
import { plain, required } from './describe.js'
import type { NodeType } from './node-type.js'

export const CODE_MEMORY_BYTES = 32 * 1024 * 1024
export const CODE_TIME_MS = 1000
const STACK_BYTES = 256 * 1024
const MAX_CODE = 100_000
// QuickJS's own limit counts allocations, not the size of big ones (ArrayBuffers, long
// strings): the WebAssembly memory itself is capped too (pages of 64 KiB: 16 MiB to 64 MiB).
const WASM_PAGES = { initial: 256, maximum: 1024 }

// The project's type libraries do not declare WebAssembly: just what is used here.
declare const WebAssembly: { compile (bytes: Uint8Array): Promise<object>, Memory: new (d: { initial: number, maximum: number }) => object }

let compiled: Promise<object> | undefined
let shared: Promise<QuickJSWASMModule> | undefined

/** The worker's QuickJS module (one per worker, replaced after any fault inside it). */
async function quickjs (): Promise<QuickJSWASMModule> {
  const { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } = await import('quickjs-emscripten')
  compiled ??= WebAssembly.compile(fs.readFileSync(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')))
  const wasmModule = await compiled
  // The module's own stderr stays quiet: after a host stack overflow inside a builtin, disposing
  // the runtime aborts with an assertion message, a fault already reported as the node's error
  // (and the module replaced); printed, it read like a crash of the worker.
  const emscriptenModule = { printErr: () => {} } as unknown as NonNullable<Parameters<typeof import('quickjs-emscripten').newVariant>[1]['emscriptenModule']>
  shared ??= newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmModule, wasmMemory: new WebAssembly.Memory(WASM_PAGES), emscriptenModule }))
  return await shared
}

const PRELUDE = `const __d = JSON.parse(globalThis.__input); globalThis.__input = undefined;
const $json = __d.json, $node = __d.node, $workflow = __d.workflow, $execution = __d.execution;
const $input = Object.freeze({ all: () => __d.inputs, first: () => __d.inputs[0], item: __d.inputs[0] });
const console = Object.freeze({ log () {}, info () {}, warn () {}, error () {} });`

async function runCode (ctx: NodeContext): Promise<NodeResult> {
  const name = ctx.node.name
  const code = ctx.rawSettings.code
  if (typeof code !== 'string' || code.trim() === '') throw new NodeError(`Code node '${name}' needs code: the body of a function, ending with a return.`)
  if (code.length > MAX_CODE) throw new NodeError(`Code node '${name}': the code is longer than ${MAX_CODE} characters.`)
  const data = JSON.stringify(sandboxData(ctx))
  // Loading the module (once per worker) does not count against the code's time.
  const QuickJS = await quickjs()
  const limitMs = Math.min(CODE_TIME_MS, ctx.deadline - Date.now())
  const stopAt = Date.now() + limitMs
  if (limitMs <= 0) throw new NodeError('The run reached its deadline.')
  const rt = QuickJS.newRuntime()
  let interrupted = false
  rt.setMemoryLimit(CODE_MEMORY_BYTES)
  rt.setMaxStackSize(STACK_BYTES)
  rt.setInterruptHandler(() => (interrupted = Date.now() > stopAt))
  const vm = rt.newContext()
  const fail = (what: unknown): never => {
    const msg = describe(what)
    if (interrupted) throw new NodeError(`Code node '${name}' ran longer than ${limitMs} ms and was stopped.`)
    if (/stack overflow|Maximum call stack/.test(msg)) throw new NodeError(`Code node '${name}' recursed too deeply (stack overflow).`)
    if (/out of memory/i.test(msg)) throw new NodeError(`Code node '${name}' used more than ${CODE_MEMORY_BYTES / 1024 / 1024} MiB of memory and was stopped.`)
    throw new NodeError(`Code node '${name}' threw ${msg}`)
  }
  try {
    const input = vm.newString(data)
    vm.setProp(vm.global, '__input', input)
    input.dispose()
    const src = `(function () { ${PRELUDE}\nreturn (async function () {\n${code}\n})() })().then(
      v => { try { globalThis.__result = JSON.stringify(v === undefined ? null : v) ?? 'null' } catch (e) { globalThis.__error = 'a return value that is not JSON-serialisable: ' + String(e && e.message) } },
      e => { globalThis.__error = (e && e.name ? e.name + ': ' : '') + String(e && e.message !== undefined ? e.message : e) })`
    const r = vm.evalCode(src, 'code_node.js')
    if (r.error !== undefined) { const e = vm.dump(r.error); r.error.dispose(); fail(e) } else r.value.dispose()
    const jobs = rt.executePendingJobs()
    if (jobs.error !== undefined) { const e = jobs.error.context.dump(jobs.error); jobs.error.dispose(); fail(e) }
    const error = readString(vm, '__error')
    if (error !== undefined) fail(error)
    const result = readString(vm, '__result')
    if (result === undefined) {
      if (interrupted) fail('interrupted')
      throw new NodeError(`Code node '${name}' did not finish: its returned promise never settled.`)
    }
    return { output: JSON.parse(result) }
  } catch (err) {
    if (err instanceof NodeError) throw err
    // The host stack or the WebAssembly instance gave out (deep recursion in a builtin):
    // the module may be damaged, so it is dropped after disposal below.
    shared = undefined
    throw new NodeError(`Code node '${name}' was stopped: ${/stack overflow|Maximum call stack/.test(String((err as Error).message)) ? 'it recursed too deeply (stack overflow)' : (err as Error).message}.`)
  } finally {
    try { vm.dispose(); rt.dispose() } catch { shared = undefined }
  }
}

export const codeNode: NodeType = {
  description: plain('code_node', 'data', 'Runs JavaScript in a sandbox with memory and time limits; its return value is the output.', {
    code: required('the body of a JavaScript function; $json, $input, $workflow, $execution are in scope')
  }, ['code'], 'the value the code returns (JSON)', 'One input, one output. The code is JavaScript, not an expression.'),
  run: runCode,
  // The code is JavaScript, read from the raw settings: never a template.
  literalSettings: ['code'],
  needs: { cpu: true }
}

function readString (vm: QuickJSContext, key: string): string | undefined {
  const h = vm.getProp(vm.global, key)
  try { return vm.typeof(h) === 'string' ? vm.getString(h) : undefined } finally { h.dispose() }
}

function describe (e: unknown): string {
  if (typeof e === 'string') return e
  if (e !== null && typeof e === 'object') {
    const o = e as { name?: unknown, message?: unknown }
    if (o.message !== undefined) return `${o.name !== undefined ? `${String(o.name)}: ` : ''}${String(o.message)}`
  }
  return String(e)
}

function sandboxData (ctx: NodeContext): unknown {
  const json: Record<string, unknown> = {}
  const node: Record<string, unknown> = {}
  const names = new Map(ctx.run.task.definition.nodes.map(n => [n.id, n.name]))
  for (const [id, out] of ctx.run.outputs) {
    json[id] = out
    const n = names.get(id)
    if (n !== undefined) node[n] = out
  }
  if (ctx.loop !== undefined) { json.$item = ctx.loop.item; json.$index = ctx.loop.index; json.$loop = ctx.loop.loop }
  return { json, node, inputs: ctx.inputs, workflow: ctx.run.task.workflow, execution: { id: ctx.run.task.execution_id } }
}
