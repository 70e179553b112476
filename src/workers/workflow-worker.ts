/**
 * The Piscina task: one workflow run. Everything arrives in the task; the
 * worker opens no database or Redis connection and is never terminated to
 * cancel a run (the run's own deadline stops it).
 */
import { runWorkflow } from './engine/run.js'
import type { ExecutionResult, RunTask } from './engine/types.js'

export default async function run (task: RunTask): Promise<ExecutionResult> {
  return await runWorkflow(task)
}
