/**
 * Assistant threads: one saved conversation per signed-in user (OIDC `sub`) per surface.
 * The `sub` comes from the token only, so a user can neither read nor overwrite another's.
 */
import { deleteThreadOp, getThreadOp, saveThreadOp, THREAD_LIMITS } from '../operations/threads.js'
import type { OperationDeps } from '../operations/types.js'
import type { ThreadSurface } from '../store/threads.js'
import { op, type OperationRoute } from './operation-routes.js'

export { THREAD_LIMITS } from '../operations/threads.js'

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

const audit = (action: string) => ({ kind: 'assistant_thread', action })

export const threadRoutes: ReadonlyArray<OperationRoute<Pick<OperationDeps, 'store'>>> = SURFACES.flatMap(({ path, surface }) => [
  op({ method: 'GET', path, role: 'viewer', etag: true, input: () => ({ surface }), operation: getThreadOp }),
  op({
    method: 'PUT', path, role: 'viewer', body: putSchema, etag: true, operation: saveThreadOp,
    options: { maxBodyBytes: 2 * THREAD_LIMITS.bytes, readOnly: ['surface'], audit: audit('update') },
    input: r => ({ surface, ifMatch: r.ifMatch, thread: { messages: r.body.messages, title: r.body.title, metadata: r.body.metadata } })
  }),
  op({ method: 'DELETE', path, role: 'viewer', status: 204, options: { audit: audit('delete') }, input: r => ({ surface, ifMatch: r.ifMatch }), operation: deleteThreadOp })
])
