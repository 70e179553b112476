/**
 * OTEL_TRACES_SAMPLER / _ARG as OpenTelemetry's built-in samplers decide. A
 * caller's sampled flag counts only under a parentbased_* sampler: under
 * always_on, always_off or traceidratio the gateway alone decides, so an
 * untrusted caller cannot force sampling beyond the setting.
 */
import type { TraceContext } from '../../../common/trace-context.js'

export type SamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'

/** Decides for a trace id, given the remote or local parent (null for a root span). */
export type Sampler = (traceId: string, parent: TraceContext | null) => boolean

export function createSampler (name: SamplerName, ratio: number): Sampler {
  const root = rootSampler(name.replace(/^parentbased_/, ''), ratio)
  if (!name.startsWith('parentbased_')) return (traceId) => root(traceId)
  return (traceId, parent) => parent !== null ? parent.sampled : root(traceId)
}

function rootSampler (name: string, ratio: number): (traceId: string) => boolean {
  if (name === 'always_on' || ratio >= 1) return name === 'always_off' ? () => false : () => true
  if (name === 'always_off' || ratio <= 0) return () => false
  // TraceIdRatioBased: the trace id's low 52 bits (exact in a double) against ratio × 2^52, so
  // every service using the same ratio keeps the same traces.
  const bound = Math.floor(ratio * 2 ** 52)
  return traceId => parseInt(traceId.slice(19), 16) < bound
}
