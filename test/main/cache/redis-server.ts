/**
 * A private redis-server on a free loopback port, for outage tests: `stop`
 * kills it (SIGKILL, as a crash), `start` brings it back on the same port with
 * whatever `save` last wrote to its directory.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../../helpers/ports.js'

export interface RedisServer {
  port: number
  url: string
  start (): Promise<void>
  stop (): Promise<void>
  /** SIGSTOP / SIGCONT: connections stay open, nothing answers. */
  freeze (): void
  thaw (): void
  /** Writes the data set to disk so the next start loads it. */
  save (): Promise<void>
  close (): Promise<void>
}

/** `args`: more redis-server options (a password, TLS, a unix socket); `dir` is where its files go. */
export async function startRedisServer (args: (dir: string) => string[] = () => []): Promise<RedisServer & { dir: string }> {
  const port = await freePort()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-redis-'))
  let child: ChildProcess | undefined
  const start = async () => {
    const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--daemonize', 'no', '--dir', dir, '--dbfilename', 'dump.rdb', ...args(dir)], { stdio: ['ignore', 'pipe', 'inherit'] })
    child = c
    await new Promise<void>((resolve, reject) => {
      let out = ''
      const timer = setTimeout(() => reject(new Error('redis-server did not start: ' + out)), 60_000)
      c.stdout?.on('data', (b: Buffer) => {
        out += b.toString()
        if (out.includes('Ready to accept connections')) { clearTimeout(timer); resolve() }
      })
      c.once('exit', code => { clearTimeout(timer); reject(new Error(`redis-server exited with ${code}: ${out}`)) })
    })
    c.stdout?.resume()
  }
  const stop = async () => {
    const c = child
    child = undefined
    if (c === undefined || c.exitCode !== null) return
    c.kill('SIGCONT')
    const exited = new Promise(resolve => c.once('exit', resolve))
    c.kill('SIGKILL')
    await exited
  }
  await start()
  return {
    dir,
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    freeze: () => { child?.kill('SIGSTOP') },
    thaw: () => { child?.kill('SIGCONT') },
    async save () {
      const r = new Redis(port, '127.0.0.1')
      try { await r.save() } finally { r.disconnect() }
    },
    async close () {
      await stop()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
