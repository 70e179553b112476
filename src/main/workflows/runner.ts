/**
 * Main-thread orchestration of workflow runs: the one place that builds a
 * RunTask, submits it through the proxy's mailbox to the worker pool, and keeps
 * the execution record.
 *
 *   gateway request / builder route / replay / manual run
 *        │ definition, trigger output, mode
 *        ▼
 *   runner.run ── inputs: sub-workflows, credentials (store), lane ── deadline from runtime_settings
 *        │        (a saved definition's inputs are kept until the configuration version moves)
 *        │
 *        ▼
 *   mailbox[proxy] (max_concurrency, max_queue) ──▶ Piscina pool ──▶ ExecutionResult
 *        │   limits: set from the served definitions at every reload (startup/workflows.ts), never per run
 *        │
 *        ▼
 *   record ── save_on_success / save_on_error ──▶ executions table (pruned to the newest N)
 *             gateway runs: written in the background, failures logged
 */
import { randomUUID } from 'node:crypto'
import { AppError, gatewayTimeout } from '../../common/errors.js'
import type { WorkflowDefinition } from '../../common/types.js'
import { Mailboxes, type MailboxLimits } from '../../actors/mailbox.js'
import type { ExecutionResult, HttpCredential, RunTask, WorkflowResponse } from '../../workers/engine/types.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/types.js'
import { insertExecution, pruneExecutions, type ExecutionMode, type ExecutionRecord } from '../store/executions.js'
import { currentVersion } from '../store/workflow-versions.js'
import type { KeyValueCache } from '../cache/types.js'
import type { RunHooks, WorkflowPool } from './pool.js'
import { boundRecord } from './record-size.js'
import { anyNodeNeeds, credentialIdsOf, resolveSubworkflows } from './subworkflows.js'
import type { TraceContext } from '../../common/trace-context.js'
import type { Tracer } from '../observability/tracing/tracer.js'
import { endRunSpan, startRunSpan } from './spans.js'

export const DEFAULT_TIMEOUT_MS = 30_000

export interface RunRequest {
  proxy: { id: string, workflow_id: string }
  definition: WorkflowDefinition
  mode: ExecutionMode
  trigger_output: unknown
  /** The execution's id when the caller chose it (a trigger's `run_id`); default a new UUID. */
  execution_id?: string
  pinned_outputs?: Record<string, unknown>
  start_node?: string
  destination_node?: string
  /** The saved version that runs; undefined: looked up when the record is written. */
  workflow_version?: number | null
  replay_of?: string | null
  /** `settings`: stored per save_on_success / save_on_error; `never`: partial and single-node runs. */
  persist: 'settings' | 'never'
  /** Wait for the record to be written before resolving (builder routes); gateway runs do not. */
  awaitPersist?: boolean
  hooks?: RunHooks
  /** The saved definition's identity: its compiled plan is cached per worker, its inputs here (see planKey). */
  definition_key?: string
  /** Per-node records come back only when they will be stored (gateway runs: nobody else reads them). */
  lean?: boolean
  /**
   * Traced runs (gateway requests, triggers, management runs): the run's span continues `parent` (the gateway's
   * span, a Kafka message's context) or starts a trace; `remote` when the parent is another
   * process's. Absent, or no tracer: not traced.
   */
  trace?: RunTrace
}

/** `trigger`: what started the run (`http`, `cron`, `imap`, `kafka`, `manual` for the management API's runs), on its span. */
export interface RunTrace { parent: TraceContext | null, remote?: boolean, kind?: 'internal' | 'consumer', trigger?: string }

/** A proxy's saved definition, as the route table holds it: the proxy's version changes with every save. */
export type GatewayRoute = { proxy: { id: string, workflow_id: string, version?: number }, workflow: WorkflowDefinition | null }

export interface Runner {
  run (req: RunRequest): Promise<{ result: ExecutionResult, record: ExecutionRecord }>
  /** The gateway's entry: the workflow's answer, or an AppError (504 past the deadline, 500 on a failure). */
  gateway (route: GatewayRoute, trigger: unknown, trace?: TraceContext | null): Promise<WorkflowResponse>
  /** Resolves once every record write started so far has finished. */
  settled (): Promise<void>
  /**
   * The proxies' mailboxes. The workflow mailboxes consumer (startup/workflows.ts) configures each
   * served workflow proxy's limits (limitsOf its definition) at start and at every reload, and
   * forgets the proxies that went; a run only looks its proxy's mailbox up.
   */
  readonly mailboxes: Pick<Mailboxes<ExecutionResult>, 'configure' | 'forget' | 'stats'>
  /** A definition's mailbox limits: its runtime_settings, else the defaults. */
  limitsOf (def: WorkflowDefinition): MailboxLimits
}

export interface RunnerDeps {
  store: Store
  pool: Pick<WorkflowPool, 'run'>
  logger: Logger
  outboundAllowlist: readonly string[]
  /** Records kept per workflow (0: none stored). */
  keepPerWorkflow: number
  /** Mailbox limits when runtime_settings do not set them, and of proxies not served with a workflow. */
  defaultLimits: MailboxLimits
  kv?: KeyValueCache
  /** Opens the HTTP credentials named by http_request_node `credentials_id`s (absent: none are applied). */
  credentials?: (ids: string[]) => Promise<Record<string, HttpCredential>>
  /**
   * The store's configuration version this instance applied last (the route reloader's). What a run
   * of a saved definition needs from the store (sub-workflows, opened credentials) is resolved once
   * and kept until it moves: every save of a proxy or credential moves it. Absent: resolved per run.
   */
  configVersion?: () => number
  /** Spans of traced runs and their nodes (null or absent: tracing off). */
  tracer?: Tracer | null
}

/** What a run needs besides its definition and trigger output. */
interface RunInputs {
  subworkflows: Record<string, WorkflowDefinition> | null
  credentials: Record<string, HttpCredential> | undefined
  /** A node that computes for long (code_node) anywhere: the cpu lane. */
  lane: 'cpu' | 'light'
  /** A node using the shared cache (cache_lookup_node) anywhere: the run needs a message channel to it. */
  usesCache: boolean
}

// Saved definitions whose inputs are kept at once (a definition per published workflow proxy).
const MAX_KEPT_INPUTS = 10_000

// Bounds the record writes in flight, so a slow database cannot pile up gateway runs' records without end.
const MAX_PENDING_WRITES = 500

export function createRunner (deps: RunnerDeps): Runner {
  const mailboxes = new Mailboxes<ExecutionResult>(deps.defaultLimits)
  let dropped = 0
  let failing = false

  const limitsOf = (def: WorkflowDefinition): MailboxLimits => ({
    maxConcurrent: def.runtime_settings?.max_concurrency ?? deps.defaultLimits.maxConcurrent,
    maxQueue: def.runtime_settings?.max_queue ?? deps.defaultLimits.maxQueue
  })

  const write = async (record: ExecutionRecord, version: number | null | undefined): Promise<void> => {
    record.workflow_version = version !== undefined ? version : (await currentVersion(deps.store, record.workflow_id))?.number ?? null
    await deps.store.tx(async q => {
      await insertExecution(q, record)
      await pruneExecutions(q, record.workflow_id, deps.keepPerWorkflow)
    })
  }

  // Writes go one after another, in the order runs finish: list order is finish order, and pruning never races itself.
  let chain: Promise<void> = Promise.resolve()
  let pending = 0
  const persist = (record: ExecutionRecord, version: number | null | undefined): Promise<void> => {
    if (pending >= MAX_PENDING_WRITES) {
      if (dropped++ === 0) deps.logger.warn('execution record writes are backed up; records are being dropped')
      record.persisted = false
      return Promise.resolve()
    }
    pending++
    chain = chain.then(async () => await write(record, version)).then(() => {
      if (failing || dropped > 0) deps.logger.info({ dropped }, 'execution record writes resumed')
      failing = false
      dropped = 0
    }, (err: Error) => {
      record.persisted = false
      if (!failing) deps.logger.warn({ err: err.message, workflow_id: record.workflow_id }, 'execution record could not be stored; the run itself finished')
      failing = true
    }).finally(() => { pending-- })
    return chain
  }

  const resolveInputs = async (def: WorkflowDefinition): Promise<RunInputs> => {
    const subworkflows = await resolveSubworkflows(deps.store, def)
    const credentialIds = deps.credentials === undefined ? [] : credentialIdsOf(def, subworkflows)
    return {
      subworkflows,
      credentials: credentialIds.length > 0 ? await deps.credentials!(credentialIds) : undefined,
      lane: anyNodeNeeds('cpu', def, subworkflows) ? 'cpu' : 'light',
      usesCache: anyNodeNeeds('cache', def, subworkflows)
    }
  }
  // A saved definition's inputs by definition_key, for the configuration version they were read at.
  // A failed read is not kept (the next run tries again); during a store outage the version cannot
  // move, so runs go on with what was read before it.
  const kept = new Map<string, Promise<RunInputs>>()
  let keptAt = -1
  const inputsOf = async (def: WorkflowDefinition, key: string | undefined): Promise<RunInputs> => {
    const version = deps.configVersion?.()
    if (key === undefined || version === undefined || version < 0) return await resolveInputs(def)
    if (version !== keptAt) { kept.clear(); keptAt = version }
    let inputs = kept.get(key)
    if (inputs === undefined) {
      if (kept.size >= MAX_KEPT_INPUTS) kept.delete(kept.keys().next().value as string)
      const resolving = resolveInputs(def)
      kept.set(key, inputs = resolving)
      resolving.catch(() => { if (kept.get(key) === resolving) kept.delete(key) })
    }
    return await inputs
  }

  const run: Runner['run'] = async (req) => {
    const def = req.definition
    const timeoutMs = def.runtime_settings?.timeout_ms ?? DEFAULT_TIMEOUT_MS
    const deadline = Date.now() + timeoutMs
    const executionId = req.execution_id ?? randomUUID()
    const { subworkflows, credentials, lane, usesCache } = await inputsOf(def, req.definition_key)
    const task: RunTask = {
      definition: def,
      workflow: { id: req.proxy.workflow_id, proxy_id: req.proxy.id },
      execution_id: executionId,
      trigger_output: req.trigger_output,
      deadline,
      outbound_allowlist: [...deps.outboundAllowlist]
    }
    if (req.pinned_outputs !== undefined) task.pinned_outputs = req.pinned_outputs
    if (req.start_node !== undefined) task.start_node = req.start_node
    if (req.destination_node !== undefined) task.destination_node = req.destination_node
    if (subworkflows !== null) { task.subworkflows = subworkflows; task.depth = 0 }
    if (credentials !== undefined) task.credentials = credentials
    if (req.definition_key !== undefined) task.definition_key = req.definition_key
    const span = req.trace === undefined || deps.tracer == null ? null : startRunSpan(deps.tracer, req, executionId)
    if (span !== null) task.trace = span.context()
    const rs = def.runtime_settings ?? {}
    const storesSuccess = req.persist === 'settings' && deps.keepPerWorkflow > 0 && rs.save_on_success === true
    const storesError = req.persist === 'settings' && deps.keepPerWorkflow > 0 && rs.save_on_error !== false
    if (req.lean === true) task.records = storesSuccess ? 'always' : storesError ? 'on_error' : 'never'
    // The served definition's limits (configured at reload), whichever definition this run is.
    const box = mailboxes.get(req.proxy.id)
    // Inside the worker, the run and its sub-runs share this budget (workers/engine/proxy-gate.ts).
    task.concurrency = box.limits.maxConcurrent
    // Hooks cost a message channel per run: only for a stream, or a cache node that needs the shared cache.
    const kv = usesCache ? deps.kv : undefined
    const hooks = req.hooks?.onEvent !== undefined || kv !== undefined ? { kv, onEvent: req.hooks?.onEvent } : undefined
    let result: ExecutionResult
    try {
      result = await box.submit(async () => await deps.pool.run(task, hooks, lane), deadline)
    } catch (err) {
      if (span !== null) endRunSpan(deps.tracer!, span, null, err)
      throw err
    }
    if (span !== null) endRunSpan(deps.tracer!, span, result)
    const keep = result.status === 'success' ? storesSuccess : storesError
    const record: ExecutionRecord = {
      id: executionId,
      workflow_id: req.proxy.workflow_id,
      proxy_id: req.proxy.id,
      mode: req.mode,
      status: result.status,
      started_at: result.started_at,
      finished_at: result.finished_at,
      duration_ms: result.duration_ms,
      trigger_output: req.trigger_output ?? null,
      node_inputs: result.node_inputs,
      nodes: result.nodes,
      response: result.response,
      error: result.error,
      workflow_version: req.workflow_version ?? null,
      replay_of: req.replay_of ?? null,
      trace_id: span !== null && span.sampled ? span.traceId : null,
      persisted: false,
      created_at: result.finished_at,
      updated_at: result.finished_at
    }
    // Bounding measures every value as JSON: only for a record someone will read.
    if (keep || req.lean !== true) boundRecord(record)
    if (keep) {
      record.persisted = true
      const written = persist(record, req.workflow_version)
      if (req.awaitPersist === true) await written
    }
    return { result, record }
  }

  return {
    run,
    async gateway (route, trigger, trace) {
      const def = route.workflow!
      const { result, record } = await run({
        proxy: route.proxy, definition: def, mode: 'gateway', trigger_output: trigger, persist: 'settings', definition_key: planKey(route), lean: true,
        ...(trace != null ? { trace: { parent: trace, trigger: 'http' } } : {})
      })
      return answerOf(result, def, record.id)
    },
    async settled () { await chain },
    mailboxes,
    limitsOf
  }
}

/** The key a saved definition's plan is cached under: a proxy's own, new with every save; none without a version. */
export function planKey (route: GatewayRoute): string | undefined {
  const p = route.proxy
  return p.version === undefined ? undefined : `${p.id}:${p.workflow_id}:${p.version}`
}

/**
 * A failed run as a gateway caller sees it: a generic sentence, since the failure's text can
 * name private addresses, code-node exceptions and sub-workflow ids. `internal` goes to the
 * log with the request id; the execution record keeps the same details.
 */
export class WorkflowFailed extends AppError {
  constructor (readonly internal: { execution_id: string, node_id: string | null, error: string }) {
    super(500, 'workflow_failed', 'The workflow failed. Quote the request id to the API owner: the details are in the gateway log and the execution record.')
  }
}

/** What the gateway answers for a finished run: the workflow's response, or 504 / 500 workflow_failed. */
export function answerOf (result: ExecutionResult, def: WorkflowDefinition, executionId: string): WorkflowResponse {
  if (result.status === 'timeout') throw gatewayTimeout(`The workflow did not finish within ${def.runtime_settings?.timeout_ms ?? DEFAULT_TIMEOUT_MS} ms.`)
  if (result.status === 'error' || result.response === null) {
    throw new WorkflowFailed({ execution_id: executionId, node_id: result.error?.node_id ?? null, error: result.error?.message ?? 'the workflow gave no answer' })
  }
  return result.response
}
