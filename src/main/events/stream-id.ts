/** Redis stream ids (`<ms>-<seq>`): the SSE ids of events that went through Redis. */
const STREAM_ID = /^\d{1,16}-\d{1,16}$/

export const isStreamId = (id: string) => STREAM_ID.test(id)

/** Orders two stream ids; both must pass `isStreamId`. */
export function compareStreamIds (a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number]
  const [bm, bs] = b.split('-').map(Number) as [number, number]
  return am !== bm ? am - bm : as - bs
}
