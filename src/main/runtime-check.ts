/**
 * Which Node.js can run the service: the LTS releases whose uWebSockets.js binary the installed
 * package ships (Node 20, 22 and 24), on a host whose C library can load it. The Node 22 and 24
 * binaries are built against glibc 2.38 (Debian 13, Ubuntu 24.04); an older host loads only the
 * Node 20 one. A start that cannot work says so in one line instead of a stack trace, and says
 * that GATEWAY_SERVER=node (node:http, no native binary) runs there. In node mode the binary is
 * never loaded: any of the LTS releases runs.
 */
import { createRequire } from 'node:module'

/** Module ABI -> Node.js LTS major that the service supports. */
export const SUPPORTED_ABIS: Readonly<Record<string, number>> = { 115: 20, 127: 22, 137: 24 }
/** The newest glibc symbol version each Node.js major's uWebSockets.js binary needs (objdump -T). */
const GLIBC_NEEDED: Readonly<Record<number, string>> = { 20: '2.27', 22: '2.38', 24: '2.38' }

export interface RuntimeFacts { node: string, abi: string, glibc: string | null }

export function runtimeFacts (): RuntimeFacts {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
  return { node: process.versions.node, abi: process.versions.modules, glibc: header?.glibcVersionRuntime ?? null }
}

const supported = (): string => Object.values(SUPPORTED_ABIS).join(', ')

/** The line to print when this Node.js is not one the service runs on, else null. */
export function unsupportedNode (facts: RuntimeFacts): string | null {
  if (SUPPORTED_ABIS[facts.abi] !== undefined) return null
  return `Gatehouse runs on the Node.js LTS releases ${supported()}; this is Node.js ${facts.node} (module ABI ${facts.abi}).`
}

/** What went wrong loading the uWebSockets.js binary, in one line that says what to do. */
export function diagnoseUwsLoad (err: unknown, facts: RuntimeFacts): string {
  const text = err instanceof Error ? err.message : String(err)
  const major = SUPPORTED_ABIS[facts.abi]
  const glibc = /version `GLIBC_([\d.]+)' not found/.exec(text)
  if (glibc !== null) {
    const older = Object.entries(GLIBC_NEEDED).filter(([, need]) => facts.glibc !== null && compareVersions(need, facts.glibc) <= 0).map(([m]) => m)
    return `Gatehouse cannot load the uWebSockets.js binary for Node.js ${facts.node} (module ABI ${facts.abi}): it needs glibc ${glibc[1]}${major !== undefined ? ` (as every Node.js ${major} build of it does)` : ''} and this host has glibc ${facts.glibc ?? 'unknown'}. ` +
      (older.length > 0 ? `Use Node.js ${older.join(' or ')} here, or a host with glibc ${glibc[1]} or newer (Debian 13, Ubuntu 24.04).` : `Use a host with glibc ${glibc[1]} or newer (Debian 13, Ubuntu 24.04).`)
  }
  if (/Cannot find module|MODULE_NOT_FOUND|ENOENT/.test(text)) {
    return `Gatehouse cannot find the uWebSockets.js binary for Node.js ${facts.node} on ${process.platform} ${process.arch} (module ABI ${facts.abi}): run npm install, and use Node.js ${supported()}.`
  }
  return `Gatehouse cannot load uWebSockets.js on Node.js ${facts.node} (module ABI ${facts.abi}): ${text.split('\n').filter(l => l.trim() !== '').slice(-1)[0] ?? text}`
}

function compareVersions (a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** The Node.js majors node mode runs on (the service's engines). */
const NODE_MODE_MAJORS = [20, 22, 24]

/** Null when the service can start on this Node.js and host; else the line that says why not. */
export function checkRuntime (server: 'uws' | 'node' = 'uws', load: () => unknown = () => createRequire(import.meta.url)('uWebSockets.js'), facts = runtimeFacts()): string | null {
  if (server === 'node') {
    const major = Number(facts.node.split('.')[0])
    return NODE_MODE_MAJORS.includes(major) ? null : `Gatehouse runs on the Node.js LTS releases ${NODE_MODE_MAJORS.join(', ')}; this is Node.js ${facts.node}.`
  }
  const unsupported = unsupportedNode(facts)
  if (unsupported !== null) return unsupported + NODE_HINT
  try {
    load()
    return null
  } catch (err) {
    return diagnoseUwsLoad(err, facts) + NODE_HINT
  }
}

/** Appended to every uWS refusal: the other HTTP layer needs no binary. */
export const NODE_HINT = ' GATEWAY_SERVER=node (node:http and node:http2, no native binary) runs on this host.'
