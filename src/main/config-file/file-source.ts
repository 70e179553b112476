/**
 * CONFIG_FILE: the service serves one configuration file. At start the file is applied with
 * prune (the gateway becomes exactly the file; a bad file stops the start), and on SIGHUP it is
 * read and applied again, atomically: a file that cannot be read, parsed or applied leaves the
 * running configuration as it was. The file's `${NAME}` references are resolved from the
 * service's own environment (read once, at start).
 */
import { readFile } from 'node:fs/promises'
import { AppError, type ErrorDetail } from '../../common/errors.js'
import type { Store } from '../store/types.js'
import { parseConfigText } from './apply-check.js'
import { applyConfig, type ApplyResult } from './apply.js'
import { resolveReferences } from './references.js'

/** The actor of the changes a CONFIG_FILE load makes (audit entries, events). */
export const CONFIG_FILE_ACTOR = 'CONFIG_FILE'

export interface ConfigFileSource {
  readonly path: string
  /** Reads the file and makes the gateway match it. Throws an Error whose message names CONFIG_FILE and every problem. */
  load (): Promise<ApplyResult>
}

export function createConfigFileSource (o: { path: string, store: Store, secretsKey: Buffer, env: Readonly<Record<string, string | undefined>> }): ConfigFileSource {
  const env = { ...o.env }
  const fail = (why: string, details: ErrorDetail[] = []) =>
    new Error(`CONFIG_FILE=${o.path} ${why}${details.length > 0 ? `: ${details.map(d => `${d.field ?? 'file'} ${d.message}`).join('; ')}` : ''}`)
  return {
    path: o.path,
    async load () {
      let text: string
      try { text = await readFile(o.path, 'utf8') } catch (err) { throw fail(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`) }
      try {
        const type = /\.json$/i.test(o.path) ? 'application/json' : 'application/yaml'
        const { file, missing } = resolveReferences(parseConfigText(text, type), env)
        if (missing.length > 0) throw fail('refers to environment variables that are not set', missing.map(m => ({ field: m.field, message: `\${${m.name}} is not set` })))
        return await applyConfig(o.store, file, {
          dryRun: false,
          prune: true,
          actor: { sub: CONFIG_FILE_ACTOR, source: 'config_file', remoteAddr: null },
          secretsKey: async () => o.secretsKey
        })
      } catch (err) {
        if (err instanceof AppError) throw fail('is invalid; nothing was changed', Array.isArray(err.details) ? err.details as ErrorDetail[] : [{ field: 'file', message: err.message }])
        throw err
      }
    }
  }
}
