/** A service with the assistant pointed at a scripted model (or unconfigured), and its chat's events. */
import { loadConfig } from '../../src/main/config/config.js'
import { start, type Service } from '../../src/main/server.js'
import { createTempDir, silentLogger } from './db.js'
import type { T } from './model.js'

/** The events of one Server-Sent Events answer. */
export function sseEvents (text: string): Array<{ event: string, data: any }> {
  return text.split('\n\n').filter(f => f.trim() !== '').map(f => ({
    event: /^event: (.*)$/m.exec(f)?.[1] ?? 'message',
    data: JSON.parse(/^data: (.*)$/m.exec(f)?.[1] ?? 'null')
  }))
}

/** The embedded store, one worker; ASSISTANT_* set when a model URL is given. */
export async function startAssistantService (t: T, modelUrl: string | null): Promise<Service> {
  const s = await start(loadConfig({
    GATEWAY_THREADS: '1',
    PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '',
    ...(modelUrl === null ? {} : { ASSISTANT_BASE_URL: modelUrl, ASSISTANT_MODEL: 'scripted-1', ASSISTANT_API_KEY: 'sk-test' })
  }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  return s
}
