/**
 * Where a running server's management API answers, kept in DATA_DIR/management.json while it
 * runs, so that `npm run token -- --url` on the same machine links to the right port whatever
 * environment the command itself has. Written at start, removed at shutdown (only by the process
 * that wrote it); a file left by a process that is gone is ignored.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const FILE = 'management.json'

export interface ManagementAddress { url: string, pid: number }

export function writeManagementAddress (dataDir: string, url: string): void {
  writeFileSync(path.join(dataDir, FILE), `${JSON.stringify({ url, pid: process.pid } satisfies ManagementAddress)}\n`, { mode: 0o644 })
}

export function removeManagementAddress (dataDir: string): void {
  if (readManagementAddress(dataDir)?.pid === process.pid) rmSync(path.join(dataDir, FILE), { force: true })
}

/** The address a server running now with this DATA_DIR wrote, or undefined. */
export function readManagementAddress (dataDir: string): ManagementAddress | undefined {
  let a: Partial<ManagementAddress>
  try { a = JSON.parse(readFileSync(path.join(dataDir, FILE), 'utf8')) as Partial<ManagementAddress> } catch { return undefined }
  if (typeof a.url !== 'string' || typeof a.pid !== 'number') return undefined
  return alive(a.pid) ? { url: a.url, pid: a.pid } : undefined
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
