/**
 * Loads a CommonJS package the first time it is used, not when the service starts: the clients
 * for services that a deployment may not use (PostgreSQL without DATABASE_URL, Redis with the
 * memory cache, IMAP and Kafka without such triggers) cost start-up time and resident memory
 * (together about half a second and tens of MB on a 2-core machine) when loaded up front.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

export function lazyRequire<T> (id: string): () => T {
  let loaded: T | undefined
  return () => (loaded ??= require(id) as T)
}

/** imapflow: the IMAP trigger and the IMAP credential check share one load. */
export const loadImapflow = lazyRequire<typeof import('imapflow')>('imapflow')
