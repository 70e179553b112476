/**
 * `${NAME}` references in a configuration file's credential configs (the dump writes each secret
 * field as one, dump.ts credentialEnvName). Whoever applies the file resolves them from its own
 * environment: `gatehouse apply` from the CLI's, the service from its own for CONFIG_FILE. The
 * REST route receives resolved files; a reference still in one is an error (apply-check.ts).
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

export interface UnresolvedReference { field: string, name: string }

/** Each string value of `value` (at any depth) with its field path (`credentials[0].config.sasl.password`). */
function walk (value: unknown, path: string, fn: (s: string, path: string) => string): unknown {
  if (typeof value === 'string') return fn(value, path)
  if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}[${i}]`, fn))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, `${path}.${k}`, fn)]))
  }
  return value
}

/** The references left in the credential configs of a parsed file, each with where it is. */
export function unresolvedReferences (file: unknown): UnresolvedReference[] {
  const out: UnresolvedReference[] = []
  forEachCredentialConfig(file, (config, at) => {
    walk(config, at, (s, field) => {
      for (const m of s.matchAll(REFERENCE)) out.push({ field, name: m[1]! })
      return s
    })
  })
  return out
}

/**
 * The file with every reference in its credential configs replaced by the variable's value from
 * `env`; the references whose variable is not set are listed (and left as they are).
 */
export function resolveReferences<T> (file: T, env: Readonly<Record<string, string | undefined>>): { file: T, missing: UnresolvedReference[] } {
  const missing: UnresolvedReference[] = []
  const copy = structuredClone(file)
  forEachCredentialConfig(copy, (config, at, set) => {
    set(walk(config, at, (s, field) => s.replace(REFERENCE, (whole, name: string) => {
      const v = env[name]
      if (v === undefined) { missing.push({ field, name }); return whole }
      return v
    })))
  })
  return { file: copy, missing }
}

function forEachCredentialConfig (file: unknown, fn: (config: unknown, at: string, set: (v: unknown) => void) => void): void {
  const list = (file as { credentials?: unknown } | null)?.credentials
  if (!Array.isArray(list)) return
  list.forEach((c: unknown, i) => {
    if (c === null || typeof c !== 'object' || !('config' in c)) return
    const cred = c as { config: unknown }
    fn(cred.config, `credentials[${i}].config`, v => { cred.config = v })
  })
}
