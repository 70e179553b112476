/**
 * The folders of src/ are layers: a module imports only from its own layer or lower ones, so a
 * reader can take the tree bottom-up and a low layer never drags a high one into its tests.
 * Every relative import (static, `export … from`, dynamic `import()`) of every .ts file under
 * src/ is checked against this order. A new folder needs a place in LAYERS.
 */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'

/** Lowest first. Folders of src/main, its top-level files (without .ts), and src/common, src/workers, src/actors. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  // What worker threads load (common code, the engine and its nodes, whose descriptions the node
  // catalogue in common reads) and the per-proxy mailboxes: never the main loop's modules.
  ['common', 'workers', 'actors'],
  // The validated environment, logging, small loaders.
  ['config', 'logger', 'lazy-require', 'runtime-check', 'validation'],
  ['store'],
  // Shared state and the cross-cutting services built on the store.
  ['access', 'auth', 'cache', 'credentials', 'events', 'observability', 'routes'],
  // The data plane and the workflow engine's main-loop side.
  ['gateway', 'workflows'],
  // Production triggers run workflows; the gateway never depends on them.
  ['triggers'],
  // Management surfaces: REST, operations, MCP, configuration files, import/export, UIs, assistant.
  ['management', 'operations', 'mcp', 'config-file', 'collections-io', 'static', 'assistant'],
  // Composition: start-up, the process entry and the CLI.
  ['startup', 'server', 'index', 'cli']
]

const SRC = new URL('../../src/', import.meta.url).pathname
const layerOf = new Map(LAYERS.flatMap((units, i) => units.map(u => [u, i] as const)))

/** The layering unit of a path relative to src/: `store` for main/store/x.ts, `server` for main/server.ts, `common` for common/x.ts. */
function unitOf (rel: string): string {
  const parts = rel.split('/')
  if (parts[0] !== 'main') return parts[0] ?? rel
  const name = parts[1] ?? ''
  return parts.length > 2 ? name : name.replace(/\.ts$/, '')
}

/** The relative specifiers a module imports or re-exports, statically or dynamically. */
function importsOf (source: string): string[] {
  const found: string[] = []
  for (const m of source.matchAll(/^\s*(?:import|export)\s(?:[^'"`;]*?\sfrom\s)?\s*['"](\.{1,2}\/[^'"]+)['"]/gm)) found.push(m[1] ?? '')
  for (const m of source.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) found.push(m[1] ?? '')
  return found
}

/** Imports of `rel` (path under src/) that reach a higher layer, as readable lines. */
function violations (rel: string, source: string): string[] {
  const from = unitOf(rel)
  const out: string[] = []
  for (const spec of importsOf(source)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec))
    const to = unitOf(target)
    const a = layerOf.get(from)
    const b = layerOf.get(to)
    if (a === undefined || b === undefined || b <= a) continue
    out.push(`src/${rel} imports src/${target.replace(/\.js$/, '.ts')}: ${from} (layer ${a}) must not depend on ${to} (layer ${b})`)
  }
  return out
}

function sourceFiles (dir: string): string[] {
  return fs.readdirSync(path.join(SRC, dir), { withFileTypes: true }).flatMap(e => {
    const rel = dir === '' ? e.name : `${dir}/${e.name}`
    if (e.isDirectory()) return sourceFiles(rel)
    return e.name.endsWith('.ts') ? [rel] : []
  })
}

const files = sourceFiles('')

t.test('every folder of src/ has a layer', async t => {
  const units = new Set(files.map(unitOf))
  t.same([...units].filter(u => !layerOf.has(u)).sort(), [], 'add new folders to LAYERS')
  t.ok(units.has('gateway') && units.has('common'), 'the walk reads src/')
})

t.test('no import runs against the layering', async t => {
  const found = files.flatMap(rel => violations(rel, fs.readFileSync(path.join(SRC, rel), 'utf8')))
  t.same(found, [], 'move the shared type or function down to the lower layer instead')
  t.ok(files.reduce((n, rel) => n + importsOf(fs.readFileSync(path.join(SRC, rel), 'utf8')).length, 0) > 500, 'the imports of src/ are read')
})

t.test('the check reports an import against the layering', async t => {
  const source = [
    "import { parseTrustedProxies } from '../gateway/trusted-proxies.js'",
    "export type { Store } from '../store/types.js'",
    "const lazy = async () => await import('../mcp/sessions.js')"
  ].join('\n')
  t.same(importsOf(source), ['../gateway/trusted-proxies.js', '../store/types.js', '../mcp/sessions.js'])
  t.same(violations('main/config/config.ts', source), [
    'src/main/config/config.ts imports src/main/gateway/trusted-proxies.ts: config (layer 1) must not depend on gateway (layer 4)',
    'src/main/config/config.ts imports src/main/store/types.ts: config (layer 1) must not depend on store (layer 2)',
    'src/main/config/config.ts imports src/main/mcp/sessions.ts: config (layer 1) must not depend on mcp (layer 6)'
  ])
  t.same(violations('main/gateway/listener.ts', "import { parseCidr } from '../../common/cidr.js'"), [], 'a lower layer may be imported')
})
