/**
 * How deep a JSON text nests, found by one scan of its brackets (strings skipped),
 * before anything recursive touches it: JSON.parse copes with 10,000 levels, but
 * cloning to a worker, JSON.stringify and schema validation then overflow the stack.
 */

/** Nesting accepted in request bodies that the gateway parses (workflow triggers, validation). */
export const MAX_JSON_DEPTH = 128

export function jsonDepthExceeds (text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) { if (++depth > max) return true }
    else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}
