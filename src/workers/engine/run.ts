/**
 * Runs a workflow definition to completion inside a worker.
 *
 *   entry (trigger or start_node) ─> ready set ─> run each ready node (concurrently)
 *        └─ outgoing edges: active when the node's handles include the edge's
 *           sourceHandle (or the node has no handles), dead otherwise
 *   a node runs once every incoming edge is settled and at least one is active;
 *   a node whose incoming edges are all dead is skipped and passes death on,
 *   so a merge waits exactly for the branches that will run.
 * The deadline aborts delays and requests in flight; the run then ends `timeout`.
 */
import { compileSettings } from '../../common/expressions/template.js'
import { workflowScope } from '../../common/expressions/scope.js'
import type { WorkflowEdge, WorkflowNode } from '../../common/types.js'
import { NodeError, type ExecutionResult, type NodeContext, type NodeRecord, type NodeResult, type RunTask, type WorkflowResponse } from './types.js'
import { passTrigger, runCondition, runDelay, runMerge, runParallel, runResponse, runSet } from '../nodes/basic.js'
import { runHttpRequest } from '../nodes/http-request.js'

type Runner = (ctx: NodeContext) => Promise<NodeResult>

const RUNNERS: Record<string, Runner> = {
  http_trigger: passTrigger,
  manual_trigger: passTrigger,
  cron_trigger: passTrigger,
  broker_consumer: passTrigger,
  imap_trigger: passTrigger,
  set_node: runSet,
  condition_node: runCondition,
  response_node: runResponse,
  delay_node: runDelay,
  parallel_node: runParallel,
  merge_node: runMerge,
  http_request_node: runHttpRequest
}
const TRIGGERS = new Set(['http_trigger', 'manual_trigger', 'cron_trigger', 'broker_consumer', 'imap_trigger'])

export async function runWorkflow (task: RunTask): Promise<ExecutionResult> {
  const started = Date.now()
  const def = task.definition
  const nodes = new Map(def.nodes.map(n => [n.id, n]))
  const outEdges = new Map<string, WorkflowEdge[]>()
  const inEdges = new Map<string, WorkflowEdge[]>()
  for (const e of def.edges) {
    if (!nodes.has(e.source) || !nodes.has(e.target)) continue
    ;(outEdges.get(e.source) ?? outEdges.set(e.source, []).get(e.source)!).push(e)
    ;(inEdges.get(e.target) ?? inEdges.set(e.target, []).get(e.target)!).push(e)
  }
  const pinned = task.pinned_outputs ?? {}
  const outputs = new Map<string, unknown>()
  const byName = new Map<string, unknown>()
  const records: NodeRecord[] = []
  const nodeInputs: Record<string, unknown> = {}
  const settled = new Map<string, Array<{ active: boolean, output: unknown }>>()
  let response: WorkflowResponse | null = null
  let lastOutput: unknown = null
  let error: ExecutionResult['error'] = null
  let status: ExecutionResult['status'] = 'success'

  const ac = new AbortController()
  const remaining = task.deadline - Date.now()
  const deadlineTimer = setTimeout(() => ac.abort(), Math.max(0, remaining))

  const entry = task.start_node !== undefined ? nodes.get(task.start_node) : def.nodes.find(n => TRIGGERS.has(n.type))
  if (entry === undefined) {
    clearTimeout(deadlineTimer)
    return finish(started, 'error', records, nodeInputs, null, { node_id: task.start_node ?? null, message: task.start_node !== undefined ? `start_node '${task.start_node}' is not a node of this workflow.` : 'The workflow has no entry trigger.' })
  }
  // Pinned outputs of nodes upstream of a partial run's start are visible to expressions.
  for (const [id, out] of Object.entries(pinned)) {
    const n = nodes.get(id)
    if (n !== undefined) { outputs.set(id, out); byName.set(n.name, out) }
  }
  const triggerNode = def.nodes.find(n => TRIGGERS.has(n.type))
  const triggerOutput = triggerNode !== undefined && pinned[triggerNode.id] !== undefined ? pinned[triggerNode.id] : task.trigger_output

  const scopeFor = (inputs: unknown[]) => workflowScope({
    trigger: triggerNode !== undefined ? (outputs.get(triggerNode.id) ?? triggerOutput) : triggerOutput,
    byName, byId: outputs, workflow: task.workflow, execution: { id: task.execution_id }, inputs
  })

  const runOne = async (node: WorkflowNode, inputs: unknown[]): Promise<void> => {
    const t0 = Date.now()
    const input = inputs.length <= 1 ? inputs[0] : inputs
    nodeInputs[node.id] = input
    let result: NodeResult
    let rec: NodeRecord
    if (Object.prototype.hasOwnProperty.call(pinned, node.id)) {
      result = { output: pinned[node.id], handles: handlesOfPinned(node, pinned[node.id]) }
      rec = { node_id: node.id, name: node.name, type: node.type, status: 'pinned', started_at: new Date(t0).toISOString(), duration_ms: 0, input, output: result.output }
    } else {
      const runner = RUNNERS[node.type]
      if (runner === undefined) throw Object.assign(new NodeError(`Node type '${node.type}' cannot run in this version.`), { nodeId: node.id })
      try {
        const settings = compileSettings(node.settings ?? {})(scopeFor(inputs)) as Record<string, unknown>
        result = await runner({ settings, input: TRIGGERS.has(node.type) ? triggerOutput : input, inputs, deadline: task.deadline, signal: ac.signal, allowlist: task.outbound_allowlist })
        if (node.type === 'http_request_node') checkStatus(node, result, outEdges, nodes)
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        records.push({ node_id: node.id, name: node.name, type: node.type, status: 'error', started_at: new Date(t0).toISOString(), duration_ms: Date.now() - t0, input, output: null, error: message })
        throw Object.assign(err instanceof Error ? err : new Error(message), { nodeId: node.id })
      }
      rec = { node_id: node.id, name: node.name, type: node.type, status: 'success', started_at: new Date(t0).toISOString(), duration_ms: Date.now() - t0, input, output: result.output }
    }
    records.push(rec)
    outputs.set(node.id, result.output)
    byName.set(node.name, result.output)
    lastOutput = result.output
    if (node.type === 'response_node') response = result.output as WorkflowResponse
    if (node.id === task.destination_node) return
    for (const e of outEdges.get(node.id) ?? []) {
      const handle = e.sourceHandle ?? ''
      const active = result.handles === undefined || result.handles.includes(handle)
      settle(e.target, { active, output: result.output })
    }
  }

  const ready: Array<{ node: WorkflowNode, inputs: unknown[] }> = []
  const settle = (target: string, s: { active: boolean, output: unknown }) => {
    const list = settled.get(target) ?? []
    list.push(s)
    settled.set(target, list)
    const expected = (inEdges.get(target) ?? []).length
    if (list.length < expected) return
    const node = nodes.get(target)!
    if (list.some(x => x.active)) ready.push({ node, inputs: list.filter(x => x.active).map(x => x.output) })
    else for (const e of outEdges.get(target) ?? []) settle(e.target, { active: false, output: null }) // skipped: pass it on
  }

  ready.push({ node: entry, inputs: [task.start_node !== undefined ? upstreamInput(entry, inEdges, outputs) : triggerOutput] })
  try {
    while (ready.length > 0) {
      if (ac.signal.aborted) throw new NodeError('The run reached its deadline.')
      const wave = ready.splice(0)
      await Promise.all(wave.map(async r => await runOne(r.node, r.inputs)))
    }
  } catch (err) {
    status = ac.signal.aborted ? 'timeout' : 'error'
    error = { node_id: (err as { nodeId?: string }).nodeId ?? null, message: status === 'timeout' ? `The workflow did not finish within its time limit: ${(err as Error).message}` : (err as Error).message }
  } finally {
    clearTimeout(deadlineTimer)
  }
  const resp = response ?? (status === 'success' ? { status: 200, headers: { 'content-type': 'application/json' }, body: lastOutput } : null)
  return finish(started, status, records, nodeInputs, resp, error)
}

function finish (started: number, status: ExecutionResult['status'], nodes: NodeRecord[], nodeInputs: Record<string, unknown>, response: WorkflowResponse | null, error: ExecutionResult['error']): ExecutionResult {
  const now = Date.now()
  return { status, started_at: new Date(started).toISOString(), finished_at: new Date(now).toISOString(), duration_ms: now - started, nodes, node_inputs: nodeInputs, response, error }
}

function upstreamInput (node: WorkflowNode, inEdges: Map<string, WorkflowEdge[]>, outputs: Map<string, unknown>): unknown {
  const ins = (inEdges.get(node.id) ?? []).map(e => outputs.get(e.source)).filter(x => x !== undefined)
  return ins.length <= 1 ? ins[0] : ins
}

function handlesOfPinned (node: WorkflowNode, out: unknown): string[] | undefined {
  if (node.type !== 'condition_node') return undefined
  return [(out as { result?: unknown })?.result === false ? 'false' : 'true']
}

/**
 * A non-2xx answer fails the node unless a condition node right after it looks at
 * its status (then the workflow handles the error itself).
 */
function checkStatus (node: WorkflowNode, result: NodeResult, outEdges: Map<string, WorkflowEdge[]>, nodes: Map<string, WorkflowNode>): void {
  const out = result.output as { response?: { status?: number }, timedOut?: boolean }
  const st = out.response?.status ?? 0
  if (out.timedOut === true || (st >= 200 && st < 300)) return
  const handled = (outEdges.get(node.id) ?? []).some(e => {
    const next = nodes.get(e.target)
    if (next?.type !== 'condition_node') return false
    const text = JSON.stringify(next.settings ?? {})
    return text.includes(`${node.name}.response.status`) || text.includes(`['${node.id}'].response.status`) || text.includes(`["${node.id}"].response.status`)
  })
  if (!handled) throw new NodeError(`The backend answered ${st}; add a condition on {{${node.name}.response.status}} to handle it.`)
}
