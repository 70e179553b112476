/** tap's `after` script: stops the throwaway servers tap-before.mjs started for this run, and waits until they are gone. */
import fs from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { stateFileFor } from './test-servers-state.mjs'

const state = stateFileFor(process.ppid)
if (fs.existsSync(state)) {
  const { pid } = JSON.parse(fs.readFileSync(state, 'utf8'))
  const alive = () => { try { process.kill(pid, 0); return true } catch { return false } }
  if (alive()) process.kill(pid, 'SIGTERM')
  const deadline = Date.now() + 20_000
  while (alive() && Date.now() < deadline) await sleep(100)
}
fs.rmSync(`${state}.log`, { force: true })
