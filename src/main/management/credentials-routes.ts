/**
 * Credentials: secret fields are sealed (AES-256-GCM) before they are stored,
 * masked on every read, and kept when an update sends the mask back. Secrets
 * never reach an event, a log line or an error message. A change moves the
 * configuration version (every instance reloads), so workflow runs, which keep
 * their opened credentials until it moves, use the new secret from then on.
 */
import { randomUUID } from 'node:crypto'
import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import { validateImapCredential } from '../credentials/imap-validate.js'
import { validateCredentialInput } from '../credentials/schemas.js'
import { maskConfig, mergeForUpdate, openConfig, sealConfig } from '../credentials/secret-fields.js'
import { loadSecretsKey } from '../credentials/secrets.js'
import type { CredentialType, ImapConfig } from '../credentials/types.js'
import { credentials, type CredentialRecord } from '../store/access.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { etag, pageQuery } from './validation.js'

const invalid = (details: ErrorDetail[]) => validationFailed(`The credential is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
const body = (required: string[]) => ({
  type: 'object', additionalProperties: false, required,
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, type: { type: 'string' }, config: { type: 'object' } }
})

export function registerCredentialRoutes (router: Router, deps: ManagementDeps): void {
  const { store, events } = deps
  let key: Promise<Buffer> | null = null
  const secretsKey = async () => await (key ??= loadSecretsKey({ secretsKey: deps.config.SECRETS_KEY, dataDir: deps.config.DATA_DIR }))
  const masked = (c: CredentialRecord) => ({ ...c, config: maskConfig(c.type as CredentialType, c.config) })

  router.add('GET', '/api/v1/credentials', async ctx => {
    const page = await credentials.list(store, pageQuery(ctx.query, { filters: ['type'] }), { type: ctx.query.get('type') ?? undefined })
    return { status: 200, body: { ...page, items: page.items.map(masked) } }
  })
  router.add('GET', '/api/v1/credentials/:id', async ctx => {
    const c = await credentials.get(store, ctx.params.id)
    return { status: 200, body: masked(c), headers: etag(c.version) }
  })
  // Registered before '/api/v1/credentials/:id' POST-less routes; the static segment is matched first.
  router.add('POST', '/api/v1/credentials/validate', async ctx => {
    const { type, config } = ctx.body as { type: string, config: Record<string, unknown> }
    if (type !== 'imap') throw invalid([{ field: 'type', message: `only 'imap' credentials can be validated (got '${String(type)}')` }])
    const details = validateCredentialInput(type, config)
    if (details.length > 0) throw invalid(details)
    const result = await validateImapCredential(config as unknown as ImapConfig, { timeoutMs: 15_000 })
    return { status: 200, body: result }
  }, { role: 'admin', body: { type: 'object', additionalProperties: false, required: ['type', 'config'], properties: { type: { type: 'string' }, config: { type: 'object' } } }, audit: false })
  router.add('POST', '/api/v1/credentials', async ctx => {
    const { name, type, config } = ctx.body as { name: string, type: string, config: Record<string, unknown> }
    const details = validateCredentialInput(type, config ?? {})
    if (details.length > 0) throw invalid(details)
    const id = randomUUID()
    const sealed = sealConfig(await secretsKey(), type as CredentialType, config, id)
    const c = await store.tx(async q => await credentials.insert(q, { id, name, type, config: sealed }))
    events.publish({ resource_kind: 'credential', credential_id: c.id, operation: 'created', actor_sub: ctx.user?.sub })
    deps.onConfigChange()
    return { status: 201, body: masked(c), headers: etag(c.version) }
  }, { role: 'admin', body: body(['name', 'type', 'config']) })
  router.add('PUT', '/api/v1/credentials/:id', async ctx => {
    const k = await secretsKey()
    const { after } = await store.tx(async q => {
      const cur = await credentials.lock(q, ctx.params.id)
      const type = (ctx.body.type ?? cur.type) as CredentialType
      let config = cur.config
      if (ctx.body.config !== undefined || type !== cur.type) {
        const stored = type === cur.type ? openConfig(k, type, cur.config, cur.id) : {}
        const merged = mergeForUpdate(type, stored, ctx.body.config ?? {})
        const details = validateCredentialInput(type, merged)
        if (details.length > 0) throw invalid(details)
        config = sealConfig(k, type, merged, cur.id) as Record<string, unknown>
      }
      return await credentials.update(q, ctx.params.id, { name: ctx.body.name, type, config }, ctx.ifMatch)
    })
    events.publish({ resource_kind: 'credential', credential_id: after.id, operation: 'updated', actor_sub: ctx.user?.sub })
    deps.onConfigChange()
    return { status: 200, body: masked(after), headers: etag(after.version) }
  }, { role: 'admin', body: body([]) })
  router.add('DELETE', '/api/v1/credentials/:id', async ctx => {
    const c = await store.tx(async q => await credentials.remove(q, ctx.params.id, ctx.ifMatch))
    events.publish({ resource_kind: 'credential', credential_id: c.id, operation: 'deleted', actor_sub: ctx.user?.sub })
    deps.onConfigChange()
    return { status: 204 }
  }, { role: 'admin' })
}
