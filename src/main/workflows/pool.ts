/** The worker pool that runs workflows (Piscina), sized by WORKERS. */
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import type { ExecutionResult, RunTask } from '../../workers/engine/types.js'

export interface WorkflowPool {
  run (task: RunTask): Promise<ExecutionResult>
  readonly threads: number
  close (): Promise<void>
}

function workerFile (): string {
  // Compiled: dist/src/workers/workflow-worker.js. From sources (tests), the .ts next to it.
  const js = fileURLToPath(new URL('../../workers/workflow-worker.js', import.meta.url))
  return fs.existsSync(js) ? js : js.replace(/\.js$/, '.ts')
}

export function createWorkflowPool (threads: number): WorkflowPool {
  const pool = new Piscina<RunTask, ExecutionResult>({ filename: workerFile(), minThreads: 1, maxThreads: threads, idleTimeout: 60_000 })
  return {
    threads,
    async run (task) { return await pool.run(task) },
    async close () { await pool.destroy() }
  }
}
