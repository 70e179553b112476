/**
 * The worker pool that runs workflows (Piscina), sized by WORKERS.
 *
 * A run that needs the main thread (a builder's event stream, the shared cache
 * for cache_lookup_node) gets its own MessageChannel: one end is transferred
 * in the task, this side answers cache requests and forwards events, and closes
 * when the worker says the run ended. Plain gateway runs create no channel.
 *
 * A task with a definition_key carries its definition only the first time the
 * key is seen here: workers keep the compiled plan (workers/engine/plan.ts), so
 * later tasks go without it, and a worker that does not hold it (another thread,
 * evicted, restarted) answers plan_missing and gets the task again in full.
 *
 * Two lanes, each its own set of threads: runs that may spend CPU in code nodes go to
 * the `cpu` lane, the rest to the `light` lane. A code node holds its thread for up to
 * a second; without lanes, a trivial run sharing a thread with spinning ones waited for
 * all of them in turn. Across lanes the operating system shares the cores fairly.
 *
 *   run ─┬─ uses code_node ─> cpu lane   (WORKERS threads, 16 runs each)
 *        └─ otherwise ──────> light lane (WORKERS threads, 16 runs each)
 */
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { BridgeMessage, ExecutionResult, RunEvent, RunTask } from '../../workers/engine/types.js'
import type { KeyValueCache } from '../cache/types.js'

export type { RunEvent, RunTask, ExecutionResult }

export interface RunHooks {
  /** Main-thread callback as each node starts and ends (the builder's test stream). */
  onEvent?: (e: RunEvent) => void
  /** The shared key-value cache (memory or Redis) for cache_lookup_node. */
  kv?: KeyValueCache
}

export type Lane = 'light' | 'cpu'

export interface WorkflowPool {
  run (task: RunTask, hooks?: RunHooks, lane?: Lane): Promise<ExecutionResult>
  /** Starts the light lane's thread now, so that the first run does not wait for it. */
  warm (): void
  /** Worker threads running now, per lane. */
  running (): Record<Lane, number>
  readonly threads: number
  close (): Promise<void>
}

function workerFile (): string {
  // Compiled: dist/src/workers/workflow-worker.js. From sources (tests), the .ts next to it.
  const js = fileURLToPath(new URL('../../workers/workflow-worker.js', import.meta.url))
  return fs.existsSync(js) ? js : js.replace(/\.js$/, '.ts')
}

// Keys remembered as sent; past this many the set starts over (the cost is one full task per key and worker).
const MAX_SENT_KEYS = 4096

/**
 * Runs one worker thread carries at once. A run spends most of its life waiting (HTTP
 * requests, delays, the cache), so a worker interleaves many; code-node work is
 * synchronous and bounded (1 s), so it only delays the others a little.
 */
export const RUNS_PER_WORKER = 16

/**
 * The lanes start with their first run (or, for the light lane, warm()): a gateway that serves no
 * workflow keeps no worker thread (about 12 MB of resident memory). Once started, the light lane
 * keeps one thread ready; the cpu lane's threads end after a minute idle.
 */
export function createWorkflowPool (threads: number): WorkflowPool {
  let light: LaneRunner | undefined
  let cpu: LaneRunner | undefined
  let closed = false
  const open = (which: Lane) => {
    if (closed) throw new Error('The workflow pool is closed')
    return which === 'light' ? (light ??= lane(threads, 1)) : (cpu ??= lane(threads, 0))
  }
  return {
    threads,
    run: async (task, hooks, which = 'light') => await open(which).run(task, hooks),
    warm () { if (!closed) open('light') },
    running: () => ({ light: light?.threads ?? 0, cpu: cpu?.threads ?? 0 }),
    async close () {
      closed = true
      await Promise.all([light?.close(), cpu?.close()])
    }
  }
}

interface LaneRunner {
  run: WorkflowPool['run']
  /** Threads running now. */
  readonly threads: number
  close (): Promise<void>
}

function lane (threads: number, minThreads: number): LaneRunner {
  // recordTiming off: nothing reads Piscina's run/wait histograms, and they cost a sample per task.
  const pool = new Piscina<RunTask, ExecutionResult>({
    filename: workerFile(), minThreads, maxThreads: threads, idleTimeout: 60_000, recordTiming: false, concurrentTasksPerWorker: RUNS_PER_WORKER
  })
  const sent = new Set<string>()
  const submit = async (task: RunTask, hooks: RunHooks | undefined): Promise<ExecutionResult> => {
    const key = task.definition_key
    if (key === undefined || task.definition === undefined) return await post(task, hooks)
    if (sent.has(key)) {
      // Cloning the definition is a good part of a small task's cost between threads: leave it out.
      const result = await post({ ...task, definition: undefined }, hooks)
      if (result.plan_missing !== true) return result
    } else {
      if (sent.size >= MAX_SENT_KEYS) sent.clear()
      sent.add(key)
    }
    return await post(task, hooks)
  }
  const post = async (task: RunTask, hooks: RunHooks | undefined): Promise<ExecutionResult> => {
    if (hooks?.onEvent === undefined && hooks?.kv === undefined) return await pool.run(task)
    const { port1, port2 } = new MessageChannel()
    const ended = serve(port1, hooks)
    try {
      const result = await pool.run({ ...task, port: port2, kv: hooks.kv !== undefined }, { transferList: [port2] })
      // Events posted just before the result travel on another port: wait for the worker's
      // 'end' so the caller has every event when run() resolves (bounded, in case it never comes).
      await Promise.race([ended, new Promise(resolve => setTimeout(resolve, 2000).unref())])
      return result
    } finally {
      port1.close()
    }
  }
  return {
    run: submit,
    get threads () { return pool.threads.length },
    async close () { await pool.destroy() }
  }
}

function serve (port: MessagePort, hooks: RunHooks): Promise<void> {
  return new Promise(resolve => {
    port.on('close', () => resolve())
    port.on('message', (m: BridgeMessage) => {
      if (m.t === 'end') { resolve(); return }
      if (m.t === 'event') {
        try { hooks.onEvent?.(m.event) } catch { /* a listener's fault must not break the run */ }
        return
      }
      if (m.t !== 'kv') return
      const kv = hooks.kv
      const answer = (r: { value?: unknown, error?: string }) => { try { port.postMessage({ t: 'kv_result', id: m.id, ...r } satisfies BridgeMessage) } catch { /* port closed: the run is over */ } }
      if (kv === undefined) { answer({ error: 'No cache is available to this run.' }); return }
      // A cache fault (Redis down) becomes a node error, never a crash.
      const op = m.op === 'get' ? kv.get(m.key) : kv.set(m.key, m.value, m.ttl_ms).then(() => undefined)
      op.then(value => answer({ value }), (err: Error) => answer({ error: `The cache failed: ${err.message}` }))
    })
  })
}
