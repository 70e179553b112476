// The workflow engine called in-process (no gateway, no worker pool): runWorkflow in a loop
// with 50 runs in flight (as wrk keeps 50 requests in flight) for the given seconds; prints runs/s
// and CPU time per run.
import { randomUUID } from 'node:crypto'
import { runWorkflow } from '../dist/src/workers/engine/run.js'
import { BENCH_TRIGGER, BENCH_WORKFLOW } from './workflow.mjs'

const seconds = Number(process.argv[2] ?? 5)
const task = () => ({
  definition: BENCH_WORKFLOW, workflow: { id: 'bench', proxy_id: 'bench' }, execution_id: randomUUID(),
  trigger_output: BENCH_TRIGGER, deadline: Date.now() + 30_000, outbound_allowlist: []
})
const first = await runWorkflow(task())
if (first.status !== 'success' || first.response?.status !== 200) throw new Error(`the bench workflow failed: ${JSON.stringify(first)}`)
// Warm-up, then the measured period.
const runFor = async (ms) => {
  const end = performance.now() + ms
  let runs = 0
  const lane = async () => { while (performance.now() < end) { await runWorkflow(task()); runs++ } }
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  await Promise.all(Array.from({ length: 50 }, lane))
  const c = process.cpuUsage(c0)
  return { runs_per_second: runs / ((performance.now() - t0) / 1000), cpu_us_per_run: (c.user + c.system) / runs }
}
await runFor(1000)
process.stdout.write(JSON.stringify({ ...await runFor(seconds * 1000), response: first.response }) + '\n')
