export type Role = 'viewer' | 'editor' | 'admin'

const RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 }

export const isRole = (v: unknown): v is Role => typeof v === 'string' && v in RANK

/** The highest role among the claim's values (unknown values are ignored). */
export function highestRole (values: unknown): Role | null {
  const list = Array.isArray(values) ? values : typeof values === 'string' ? values.split(/[\s,]+/) : []
  let best: Role | null = null
  for (const v of list) if (isRole(v) && (best === null || RANK[v] > RANK[best])) best = v
  return best
}

export const hasRole = (have: Role | null, need: Role): boolean => have !== null && RANK[have] >= RANK[need]

/** Reads a possibly dotted claim path such as `realm_access.roles`. */
export function claimAt (payload: Record<string, unknown>, claim: string): unknown {
  if (claim in payload) return payload[claim]
  let cur: unknown = payload
  for (const part of claim.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}
