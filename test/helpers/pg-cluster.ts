/**
 * A throwaway PostgreSQL cluster for outage tests: initdb in a temp dir, a
 * postmaster on a free loopback port (Unix socket in the same dir), stopped
 * with `pg_ctl -m immediate` (a crash: no checkpoint, connections cut) and
 * started again on the same port. Never the shared server. As root, the
 * binaries run as the `postgres` user (initdb refuses root).
 */
import { execFile } from 'node:child_process'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './ports.js'

const run = promisify(execFile)

export interface PgCluster {
  port: number
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  start (): Promise<void>
  /** pg_ctl stop -m immediate: the postmaster and every backend quit at once. */
  crash (): Promise<void>
  close (): Promise<void>
}

async function binDir (): Promise<string> {
  const { stdout } = await run('pg_config', ['--bindir']).catch(() => ({ stdout: '' }))
  return stdout.trim()
}

async function postgresUser (): Promise<{ uid: number, gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const { stdout } = await run('id', ['-u', 'postgres'])
  const { stdout: g } = await run('id', ['-g', 'postgres'])
  return { uid: Number(stdout.trim()), gid: Number(g.trim()) }
}

export async function startPgCluster (): Promise<PgCluster> {
  const bin = await binDir()
  const tool = (name: string) => bin === '' ? name : path.join(bin, name)
  const user = await postgresUser()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-pg-'))
  if (user !== undefined) await chown(dir, user.uid, user.gid)
  const data = path.join(dir, 'data')
  const port = await freePort()
  const opts = { ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' }, timeout: 60_000 }
  await run(tool('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], opts)
  const start = async () => {
    await run(tool('pg_ctl'), ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60', '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=40 -c shared_buffers=16MB`, 'start'], opts)
  }
  const pgCtlStop = async (mode: string) => {
    await run(tool('pg_ctl'), ['-D', data, '-m', mode, '-w', 'stop'], opts).catch(() => {})
  }
  await start()
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    crash: async () => { await pgCtlStop('immediate') },
    async close () {
      await pgCtlStop('immediate')
      await rm(dir, { recursive: true, force: true })
    }
  }
}
