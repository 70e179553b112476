/**
 * Assistant threads: one saved conversation per signed-in user (OIDC `sub`) per surface.
 * The `sub` comes from the token only, so a user can neither read nor overwrite another's.
 */
import { payloadTooLarge } from '../../common/errors.js'
import { deleteThread, getThread, saveThread, type ThreadSurface } from '../store/threads.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { etag } from './validation.js'

export const THREAD_LIMITS = { messages: 1000, bytes: 1024 * 1024 }

const SURFACES: Array<{ path: string, surface: ThreadSurface }> = [
  { path: '/api/v1/copilot/thread', surface: 'management' },
  { path: '/api/v1/developer-portal/copilot/thread', surface: 'developer_portal' }
]

const putSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['messages'],
  properties: {
    // the count is checked by the handler, so that too many messages is a 413 like too many bytes
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: {
          // Assistants name roles differently (user, assistant, system, tool, developer, function, model…).
          role: { type: 'string', minLength: 1, maxLength: 50 },
          content: { type: ['string', 'object', 'array'] }
        }
      }
    },
    title: { type: ['string', 'null'], maxLength: 500 },
    metadata: { type: 'object' }
  }
}

export function registerThreadRoutes (router: Router, deps: Pick<ManagementDeps, 'store'>): void {
  const audit = (action: string) => ({ kind: 'assistant_thread', action })
  for (const { path, surface } of SURFACES) {
    router.add('GET', path, async ctx => {
      const thread = await getThread(deps.store, surface, ctx.user!.sub)
      return { status: 200, body: thread, headers: etag(thread.version) }
    }, { role: 'viewer' })

    router.add('PUT', path, async ctx => {
      const { messages, title, metadata } = ctx.body
      if (messages.length > THREAD_LIMITS.messages) {
        throw payloadTooLarge(`The thread has ${messages.length} messages; at most ${THREAD_LIMITS.messages} are kept. Drop older messages or start a new thread.`)
      }
      const size = Buffer.byteLength(JSON.stringify({ messages, title, metadata }))
      if (size > THREAD_LIMITS.bytes) {
        throw payloadTooLarge(`The thread is ${size} bytes; at most ${THREAD_LIMITS.bytes} bytes (1 MiB) are kept. Drop older messages or start a new thread.`)
      }
      const thread = await saveThread(deps.store, surface, ctx.user!.sub, { messages, title, metadata }, ctx.ifMatch)
      return { status: 200, body: thread, headers: etag(thread.version) }
    }, { role: 'viewer', body: putSchema, maxBodyBytes: 2 * THREAD_LIMITS.bytes, readOnly: ['surface'], audit: audit('update') })

    router.add('DELETE', path, async ctx => {
      await deleteThread(deps.store, surface, ctx.user!.sub, ctx.ifMatch)
      return { status: 204 }
    }, { role: 'viewer', audit: audit('delete') })
  }
}
