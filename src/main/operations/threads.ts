/**
 * Assistant threads: one saved conversation per signed-in user per surface. The user is the
 * caller's `sub` (from the token only), so a user can neither read nor overwrite another's.
 */
import { payloadTooLarge } from '../../common/errors.js'
import { deleteThread, getThread, saveThread, type Thread, type ThreadInput, type ThreadSurface } from '../store/threads.js'
import type { Caller, OperationDeps } from './types.js'

export const THREAD_LIMITS = { messages: 1000, bytes: 1024 * 1024 }

type Deps = Pick<OperationDeps, 'store'>

export async function getThreadOp (deps: Deps, caller: Caller, input: { surface: ThreadSurface }): Promise<Thread> {
  return await getThread(deps.store, input.surface, caller.sub)
}

/** Too many messages is a 413 like too many bytes. */
export async function saveThreadOp (deps: Deps, caller: Caller, input: { surface: ThreadSurface, ifMatch?: number, thread: ThreadInput }): Promise<Thread> {
  const { messages, title, metadata } = input.thread
  if (messages.length > THREAD_LIMITS.messages) {
    throw payloadTooLarge(`The thread has ${messages.length} messages; at most ${THREAD_LIMITS.messages} are kept. Drop older messages or start a new thread.`)
  }
  const size = Buffer.byteLength(JSON.stringify({ messages, title, metadata }))
  if (size > THREAD_LIMITS.bytes) {
    throw payloadTooLarge(`The thread is ${size} bytes; at most ${THREAD_LIMITS.bytes} bytes (1 MiB) are kept. Drop older messages or start a new thread.`)
  }
  return await saveThread(deps.store, input.surface, caller.sub, { messages, title, metadata }, input.ifMatch)
}

export async function deleteThreadOp (deps: Deps, caller: Caller, input: { surface: ThreadSurface, ifMatch?: number }): Promise<void> {
  await deleteThread(deps.store, input.surface, caller.sub, input.ifMatch)
}
