/** The effects an operation can name, over the event sink and the configuration reload. */
import type { EventSink } from '../events/types.js'
import { loadSecretsKey } from '../credentials/secrets.js'
import type { Store } from '../store/types.js'
import type { Effects, OperationDeps } from './types.js'

export function createEffects (events: EventSink, onConfigChange: () => void): Effects {
  return {
    changed (caller, ...changes) {
      for (const c of changes) events.publish({ ...c, actor_sub: caller.sub })
      onConfigChange()
    }
  }
}

export function createOperationDeps (deps: { store: Store, events: EventSink, onConfigChange: () => void, config: { SECRETS_KEY: string, DATA_DIR: string } }): OperationDeps {
  let key: Promise<Buffer> | null = null
  return {
    store: deps.store,
    effects: createEffects(deps.events, deps.onConfigChange),
    secretsKey: async () => await (key ??= loadSecretsKey({ secretsKey: deps.config.SECRETS_KEY, dataDir: deps.config.DATA_DIR }))
  }
}
