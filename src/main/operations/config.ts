/**
 * The gateway as a file (docs/config-as-code.md): read it whole, and make the gateway match one.
 * The routes (src/main/management/config-routes.ts) render the file as JSON or YAML and read the
 * uploaded file's bytes; these operations take and give plain data.
 */
import { parseConfigText } from '../config-file/apply-check.js'
import { applyConfig } from '../config-file/apply.js'
import type { ConfigChange } from '../config-file/diff.js'
import { dumpConfig, type ConfigFile } from '../config-file/dump.js'
import { configVersion, snapshotRead } from '../store/rows.js'
import type { Caller, Change, OperationDeps } from './types.js'

/** The whole configuration and its version, read as one view (an If-Match on this version means this file). */
export async function dumpConfigOp (deps: Pick<OperationDeps, 'store'>, _caller: Caller, _input: Record<string, never>): Promise<{ file: ConfigFile, version: number }> {
  return await snapshotRead(deps.store, async q => ({ version: await configVersion(q), file: await dumpConfig(q) }))
}

export interface ApplyInput {
  /** The file as sent: JSON or YAML text, told apart by `contentType`. */
  raw: Buffer
  contentType: string | undefined
  dryRun: boolean
  prune: boolean
  /** The configuration version the caller read (If-Match); another one fails with 412. */
  ifMatch?: number
  /** Where the request came from, for the audit rows the apply writes (one per changed resource). */
  remoteAddr: string | null
}

/** Makes the gateway match the file in one transaction (only the changes on a dry run). */
export async function applyConfigOp (deps: OperationDeps, caller: Caller, input: ApplyInput): Promise<{ changes: ConfigChange[], applied: boolean, version: number }> {
  const data = parseConfigText(input.raw, input.contentType)
  const result = await applyConfig(deps.store, data, {
    dryRun: input.dryRun,
    prune: input.prune,
    ifVersion: input.ifMatch,
    actor: { sub: caller.sub, source: caller.source, remoteAddr: input.remoteAddr },
    secretsKey: deps.secretsKey
  })
  // The events name the caller as actor already; the effect names it again, the same.
  if (result.applied) deps.effects.changed(caller, ...result.events.map(({ actor_sub: _actor, ...e }) => e as Change))
  return { changes: result.changes, applied: result.applied, version: result.version }
}
