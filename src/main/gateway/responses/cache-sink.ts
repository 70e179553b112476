import type { ResponseHead } from '../response-parser.js'
import type { EncodedMemo } from './whole-answer.js'

/** Where the relay of a cache miss hands the backend's answer (see cache-stage.ts). */
export interface CacheSink {
  /** Bytes to gather at most to store an answer with this head, or -1 when it will not be stored. */
  accepts (h: ResponseHead, framing: 'none' | 'length' | 'chunked' | 'close', length: number): number
  /** The whole answer: stored when it may be; the entry's memo of encoded bodies, or null. */
  store (h: ResponseHead, body: Buffer): EncodedMemo | null
  /** Not stored after all (too large, failed, not cacheable). Idempotent. */
  decline (): void
}
