/**
 * Runs a workflow definition to completion inside a worker.
 *
 *   entry (trigger or start_node) ─> ready set ─> run each ready node (concurrently)
 *        └─ outgoing edges: active when the node's handles include the edge's
 *           sourceHandle (or the node has no handles), dead otherwise
 *   a node runs once every incoming edge is settled and at least one is active;
 *   a node whose incoming edges are all dead is skipped and passes death on,
 *   so a merge waits exactly for the branches that will run.
 * Loop bodies are levels of their own (graph.ts), run once per item by the
 * loop node. The deadline is checked before every wave and iteration (so even
 * a loop of synchronous nodes stops) and aborts delays and requests in flight;
 * the run then ends `timeout`.
 */
import { workflowScope, type RunContext } from '../../common/expressions/scope.js'
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../common/types.js'
import { NodeError, type ExecutionResult, type NodeRecord, type NodeResult, type RunTask, type WorkflowResponse } from './types.js'
import { newSpanId, type FinishedSpan, type TraceContext } from '../../common/trace-context.js'
import { levelOf, type Level } from './graph.js'
import { planFor, templateOf, type Plan } from './plan.js'
import { openBridge, type Bridge } from './bridge.js'
import { nodeType } from '../nodes/registry.js'
import { gateOf, type ProxyGate } from './proxy-gate.js'

/** A guard against runaway graphs (nested loops): node runs per workflow run, its sub-workflow runs included. */
export const MAX_NODE_RUNS = 100_000
/** Sub-workflow runs one run may start in all (a workflow calling itself ten times per level would start 111,110). */
export const MAX_SUB_RUNS = 1000

/**
 * One budget for a run and every sub-run under it: node runs and sub-runs are
 * counted across the whole tree, and the first limit reached stops all of it.
 */
interface RunBudget { nodeRuns: number, subRuns: number, stop: Error | null, gate: ProxyGate }

const DEFAULT_CONCURRENCY = 8
// A chain of node runs that never wait (set nodes, a long loop) gives the thread back this often.
const YIELD_EVERY_NODE_RUNS = 256

type LoopScope = NonNullable<RunContext['loop']>

interface RunState {
  task: RunTask & { definition: WorkflowDefinition }
  plan: Plan
  nodes: Map<string, WorkflowNode>
  allOut: Map<string, WorkflowEdge[]>
  pinned: Record<string, unknown>
  outputs: Map<string, unknown>
  byName: Map<string, unknown>
  records: NodeRecord[]
  nodeInputs: Record<string, unknown>
  response: WorkflowResponse | null
  ac: AbortController
  bridge: Bridge
  triggerNode: WorkflowNode | undefined
  triggerOutput: unknown
  budget: RunBudget
  destinationReached: boolean
  /** Whether this execution holds a permit of its proxy's gate, and its sub-runs in flight (it holds none while they run). */
  holding: boolean
  subsInFlight: number
  /** Finished node spans (sampled runs only), sub-runs' included. */
  spans: FinishedSpan[] | null
}

interface RunOptions {
  bridge?: Bridge
  /** For sub-runs: the caller's budget, and its abort signal (its deadline or failure stops the sub-run too). */
  budget?: RunBudget
  signal?: AbortSignal
}

export async function runWorkflow (task: RunTask, opts: RunOptions = {}): Promise<ExecutionResult> {
  const started = Date.now()
  const bridge = opts.bridge ?? openBridge(task.port, task.kv === true, task.deadline)
  try {
    return await execute(task, bridge, started, opts)
  } finally {
    if (opts.bridge === undefined) bridge.close()
  }
}

async function execute (task: RunTask, bridge: Bridge, started: number, opts: RunOptions): Promise<ExecutionResult> {
  const plan = planFor(task)
  if (plan === undefined) return { ...finish(started, 'error', null, null, { node_id: null, message: 'The definition was not sent.' }), plan_missing: true }
  const def = plan.definition
  const { nodes, allOut, triggerNode } = plan
  const pinned = task.pinned_outputs ?? {}
  const st: RunState = {
    task: { ...task, definition: def },
    plan, nodes, allOut, pinned, outputs: new Map(), byName: new Map(), records: [], nodeInputs: {}, response: null,
    ac: new AbortController(), bridge, triggerNode,
    triggerOutput: triggerNode !== undefined && pinned[triggerNode.id] !== undefined ? pinned[triggerNode.id] : task.trigger_output,
    budget: opts.budget ?? { nodeRuns: 0, subRuns: 0, stop: null, gate: gateOf(task.workflow.proxy_id ?? task.workflow.id, task.concurrency ?? DEFAULT_CONCURRENCY) },
    destinationReached: false, holding: false, subsInFlight: 0,
    spans: task.trace?.sampled === true ? [] : null
  }
  const entry = task.start_node !== undefined ? nodes.get(task.start_node) : triggerNode
  if (entry === undefined) {
    return finish(started, 'error', st, null, { node_id: task.start_node ?? null, message: task.start_node !== undefined ? `start_node '${task.start_node}' is not a node of this workflow.` : 'The workflow has no entry trigger.' })
  }
  // Pinned outputs of nodes upstream of a partial run's start are visible to expressions.
  for (const [id, out] of Object.entries(pinned)) {
    const n = nodes.get(id)
    if (n !== undefined) { st.outputs.set(id, out); st.byName.set(n.name, out) }
  }
  const deadlineTimer = setTimeout(() => st.ac.abort(), Math.max(0, task.deadline - Date.now()))
  const parentAborted = () => st.ac.abort()
  if (opts.signal?.aborted === true) st.ac.abort()
  opts.signal?.addEventListener('abort', parentAborted, { once: true })
  let status: ExecutionResult['status'] = 'success'
  let error: ExecutionResult['error'] = null
  let last: unknown = null
  try {
    // A sub-run starts on a later turn of the event loop: other proxies' runs get the thread between.
    await st.budget.gate.enter(st.ac.signal, opts.budget !== undefined)
    st.holding = true
    const top = plan.top
    const level = task.start_node !== undefined ? (levelOf(top, entry.id) ?? top) : top
    const input = task.start_node !== undefined ? upstreamInput(entry, def.edges, st.outputs) : st.triggerOutput
    last = await runLevel(st, level, [{ node: entry, inputs: [input] }], [], undefined)
  } catch (err) {
    // Past the deadline, whatever failed failed because time ran out (a code node stopped early, say).
    if (Date.now() >= task.deadline) st.ac.abort()
    status = st.ac.signal.aborted ? 'timeout' : 'error'
    const message = err instanceof Error ? err.message : String(err)
    error = { node_id: (err as { nodeId?: string }).nodeId ?? null, message: status === 'timeout' ? `The workflow did not finish within its time limit: ${message}` : message }
  } finally {
    if (st.holding) { st.holding = false; st.budget.gate.leave() }
    clearTimeout(deadlineTimer)
    opts.signal?.removeEventListener('abort', parentAborted)
  }
  const resp = st.response ?? (status === 'success' ? { status: 200, headers: { 'content-type': 'application/json' }, body: last ?? null } : null)
  return finish(started, status, st, resp, error)
}

function checkTime (st: RunState): void {
  // Synchronous nodes never yield to the timer: look at the clock as well.
  if (!st.ac.signal.aborted && Date.now() >= st.task.deadline) st.ac.abort()
  if (st.ac.signal.aborted) throw new NodeError('The run reached its deadline.')
}

/**
 * Schedules one level: `seeds` are ready at once, `entries` settle the level's
 * entry edges (a loop body's edges from its loop node). Returns the output of
 * the level's last node to finish (a loop iteration's result).
 */
async function runLevel (st: RunState, level: Level, seeds: Array<{ node: WorkflowNode, inputs: unknown[] }>, entries: Array<{ edge: WorkflowEdge, output: unknown }>, loop: LoopScope | undefined): Promise<unknown> {
  const settled = new Map<string, Array<{ active: boolean, output: unknown }>>()
  const ready = [...seeds]
  let last: unknown
  const settle = (target: string, s: { active: boolean, output: unknown }): void => {
    const list = settled.get(target) ?? []
    list.push(s)
    settled.set(target, list)
    if (list.length < (level.inEdges.get(target) ?? []).length) return
    if (list.some(x => x.active)) ready.push({ node: st.nodes.get(target)!, inputs: list.filter(x => x.active).map(x => x.output) })
    else for (const e of level.outEdges.get(target) ?? []) settle(e.target, { active: false, output: null }) // skipped: pass it on
  }
  for (const { edge, output } of entries) settle(edge.target, { active: true, output })
  while (ready.length > 0) {
    checkTime(st)
    const wave = ready.splice(0)
    await Promise.all(wave.map(async r => {
      const result = await runOne(st, level, r.node, r.inputs, loop)
      last = result.output
      if (r.node.id === st.task.destination_node) { st.destinationReached = true; return }
      for (const e of level.outEdges.get(r.node.id) ?? []) {
        settle(e.target, { active: result.handles === undefined || result.handles.includes(e.sourceHandle ?? ''), output: result.output })
      }
    }))
  }
  return last
}

async function runOne (st: RunState, level: Level, node: WorkflowNode, inputs: unknown[], loop: LoopScope | undefined): Promise<NodeResult> {
  if (++st.budget.nodeRuns > MAX_NODE_RUNS) overBudget(st, node, `The run executed more than ${MAX_NODE_RUNS} nodes (sub-workflows included); check the loops.`)
  if (st.budget.nodeRuns % YIELD_EVERY_NODE_RUNS === 0) await new Promise(resolve => setImmediate(resolve))
  const t0 = Date.now()
  const trace = nodeTrace(st.task.trace)
  const spanStart = trace === undefined ? 0 : performance.timeOrigin + performance.now()
  const input = inputs.length <= 1 ? inputs[0] : inputs
  const base = { node_id: node.id, name: node.name, node_type: node.type }
  const rec = { node_id: node.id, name: node.name, type: node.type, started_at: new Date(t0).toISOString(), input, ...(loop !== undefined ? { loop_index: loop.index } : {}) }
  st.nodeInputs[node.id] = input
  st.bridge.emit({ type: 'node_started', ...base, at: rec.started_at, input })
  let result: NodeResult
  let status: 'success' | 'pinned' = 'success'
  // Expressions in the node's settings that referred to nothing: shown on its record.
  const misses: string[] = []
  const unresolved = () => misses.length > 0 ? { unresolved: [...new Set(misses)] } : {}
  if (Object.prototype.hasOwnProperty.call(st.pinned, node.id)) {
    result = { output: st.pinned[node.id], handles: handlesOfPinned(node, st.pinned[node.id]) }
    status = 'pinned'
  } else {
    try {
      result = await invoke(st, level, node, inputs, input, loop, misses, trace)
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      if (trace !== undefined) endNodeSpan(st, node, trace, spanStart, 'error', loop, message)
      const duration = Date.now() - t0
      st.records.push({ ...rec, status: 'error', duration_ms: duration, output: null, error: message, ...unresolved() })
      st.bridge.emit({ type: 'node_failed', ...base, at: new Date().toISOString(), duration_ms: duration, error: message })
      // An inner node's failure keeps its own id when it bubbles through a loop or sub-workflow.
      throw Object.assign(err instanceof Error ? err : new Error(message), { nodeId: (err as { nodeId?: string }).nodeId ?? node.id })
    }
  }
  const duration = status === 'pinned' ? 0 : Date.now() - t0
  if (trace !== undefined) endNodeSpan(st, node, trace, spanStart, status, loop)
  st.records.push({ ...rec, status, duration_ms: duration, output: result.output, ...unresolved() })
  st.bridge.emit({ type: 'node_finished', ...base, at: new Date().toISOString(), duration_ms: duration, output: result.output, status })
  st.outputs.set(node.id, result.output)
  st.byName.set(node.name, result.output)
  if (nodeType(node.type)?.answers === true) st.response = result.output as WorkflowResponse
  return result
}

async function invoke (st: RunState, level: Level, node: WorkflowNode, inputs: unknown[], input: unknown, loop: LoopScope | undefined, misses: string[], trace: TraceContext | undefined): Promise<NodeResult> {
  const type = nodeType(node.type)
  if (type === undefined) throw new NodeError(`Node type '${node.type}' cannot run in this version.`)
  const settings = templateOf(st.plan, node)(scopeFor(st, inputs, loop, src => { if (misses.length < 20) misses.push(src) })) as Record<string, unknown>
  const task = st.task
  const result = await type.run({
    settings,
    rawSettings: node.settings ?? {},
    input: type.description.entry_trigger ? st.triggerOutput : input,
    inputs,
    deadline: task.deadline,
    signal: st.ac.signal,
    allowlist: task.outbound_allowlist,
    node: { id: node.id, name: node.name, type: node.type },
    kv: st.bridge.kv,
    loop,
    trace,
    run: {
      task,
      outputs: st.outputs,
      runSub: async (definition: WorkflowDefinition, workflowId: string, subInput: unknown) => {
        checkTime(st)
        if (++st.budget.subRuns > MAX_SUB_RUNS) overBudget(st, node, `The run started more than ${MAX_SUB_RUNS} sub-workflow runs; check for a workflow calling itself.`)
        // While its sub-runs run, the caller gives its permit to them (see proxy-gate.ts).
        if (st.subsInFlight++ === 0 && st.holding) { st.holding = false; st.budget.gate.leave() }
        let r: ExecutionResult
        try {
          // records 'never': the caller reads only the answer, so a sub-run's per-node records are not kept.
          r = await runWorkflow({
            definition, workflow: { id: workflowId }, execution_id: task.execution_id, trigger_output: subInput, records: 'never',
            deadline: task.deadline, outbound_allowlist: task.outbound_allowlist, subworkflows: task.subworkflows, credentials: task.credentials, depth: (task.depth ?? 0) + 1,
            // The sub-run's nodes are children of the calling node's span.
            ...(trace !== undefined ? { trace } : {})
          }, { bridge: { emit: () => {}, kv: st.bridge.kv, close: () => {} }, budget: st.budget, signal: st.ac.signal })
          if (r.spans !== undefined && st.spans !== null) st.spans.push(...r.spans)
        } finally {
          if (--st.subsInFlight === 0) { await st.budget.gate.enter(st.ac.signal, true); st.holding = true }
        }
        // A spent budget ends the whole tree with its own message, not wrapped once per level.
        if (st.budget.stop !== null) throw st.budget.stop
        return r
      },
      iterate: async (item: unknown, index: number, total: number) => {
        checkTime(st)
        const body = level.bodies.get(node.id)
        if (body === undefined) return item
        const scope: LoopScope = { item, index, loop: { node: node.name, index, total, first: index === 0, last: index === total - 1 } }
        const out = await runLevel(st, body, [], body.entryEdges.map(edge => ({ edge, output: item })), scope)
        return out === undefined ? item : out
      },
      stopAfter: () => st.destinationReached
    }
  })
  type.afterRun?.(node, result, st.allOut, st.nodes, nodeType)
  return result
}

function overBudget (st: RunState, node: WorkflowNode, message: string): never {
  st.budget.stop ??= Object.assign(new NodeError(message), { nodeId: node.id })
  throw st.budget.stop
}

function scopeFor (st: RunState, inputs: unknown[], loop: LoopScope | undefined, miss?: (src: string) => void) {
  const t = st.triggerNode
  return workflowScope({
    trigger: t !== undefined ? (st.outputs.get(t.id) ?? st.triggerOutput) : st.triggerOutput,
    byName: st.byName, byId: st.outputs, workflow: st.task.workflow, execution: { id: st.task.execution_id }, inputs, loop, miss
  })
}

function finish (started: number, status: ExecutionResult['status'], st: RunState | null, response: WorkflowResponse | null, error: ExecutionResult['error']): ExecutionResult {
  const now = Date.now()
  // Records the caller will not store stay here: they are most of the result's cost between threads.
  const mode = st?.task.records ?? 'always'
  const keep = st !== null && (mode === 'always' || (mode === 'on_error' && status !== 'success'))
  const result: ExecutionResult = { status, started_at: new Date(started).toISOString(), finished_at: new Date(now).toISOString(), duration_ms: now - started, nodes: keep ? st.records : [], node_inputs: keep ? st.nodeInputs : {}, response, error }
  if (st?.spans != null) result.spans = st.spans
  return result
}

/** A node run's own span context under the run's (same trace and sampling, a new span id); none without a trace. */
function nodeTrace (run: TraceContext | undefined): TraceContext | undefined {
  if (run === undefined) return undefined
  return run.state === undefined
    ? { trace_id: run.trace_id, span_id: newSpanId(), sampled: run.sampled }
    : { trace_id: run.trace_id, span_id: newSpanId(), sampled: run.sampled, state: run.state }
}

function endNodeSpan (st: RunState, node: WorkflowNode, trace: TraceContext, start: number, status: 'success' | 'pinned' | 'error', loop: LoopScope | undefined, message?: string): void {
  if (st.spans === null) return
  const attributes: FinishedSpan['attributes'] = {
    'gatehouse.node.id': node.id, 'gatehouse.node.name': node.name, 'gatehouse.node.type': node.type, 'gatehouse.node.status': status,
    'gatehouse.execution.id': st.task.execution_id
  }
  if (loop !== undefined) attributes['gatehouse.node.loop_index'] = loop.index
  st.spans.push({
    span_id: trace.span_id, parent_id: st.task.trace!.span_id, name: `${node.type} ${node.name}`, kind: 0,
    start, end: performance.timeOrigin + performance.now(), status: status === 'error' ? 2 : 0, attributes, ...(message !== undefined ? { message } : {})
  })
}

function upstreamInput (node: WorkflowNode, edges: WorkflowEdge[], outputs: Map<string, unknown>): unknown {
  const ins = edges.filter(e => e.target === node.id).map(e => outputs.get(e.source)).filter(x => x !== undefined)
  return ins.length <= 1 ? ins[0] : ins
}

/** The handles a pinned output follows: a branching node's from its output (a pinned loop goes to done). */
function handlesOfPinned (node: WorkflowNode, out: unknown): string[] | undefined {
  return nodeType(node.type)?.pinnedHandles?.(out)
}
