/**
 * The node registry: one module per node type, named after it; the catalogue is
 * the modules' descriptions; the engine, plan, validation and run preparation name
 * no node type; and reading the descriptions loads no library only a run needs.
 */
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { NODE_TYPES, nodeType, sourceHandlesOf } from '../../src/workers/nodes/registry.js'
import { NODE_CATALOGUE, NODE_TYPE_NAMES, NON_GATEWAY_TRIGGER_TYPES, PRODUCTION_TRIGGER_TYPES } from '../../src/common/workflow-catalogue.js'
import { isProductionKind, type TriggerKind } from '../../src/main/triggers/types.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const types = NODE_TYPES.map(n => n.description.type)

t.test('every node type is one module named after it, listed once', async t => {
  t.equal(new Set(types).size, types.length, 'no type is listed twice')
  for (const type of types) {
    t.ok(fs.existsSync(path.join(root, 'src/workers/nodes', `${type.replace(/_/g, '-')}.ts`)), `${type} lives in src/workers/nodes/${type.replace(/_/g, '-')}.ts`)
    t.equal(nodeType(type)?.description.type, type)
  }
  t.same(NODE_TYPE_NAMES, types, 'the catalogue lists the registered types, in order')
  t.equal(NODE_CATALOGUE[0], NODE_TYPES[0]?.description, 'catalogue entries are the modules\' descriptions')
  t.equal(nodeType('no_such_node'), undefined)
  t.equal(sourceHandlesOf({ type: 'no_such_node' }), null)
})

t.test('the engine, plan, validation, run preparation and the status rule name no node type', async t => {
  const files = [
    ...fs.readdirSync(path.join(root, 'src/workers/engine')).map(f => `src/workers/engine/${f}`),
    'src/main/workflows/definition.ts', 'src/main/workflows/graph.ts', 'src/main/workflows/runner.ts',
    'src/main/workflows/subworkflows.ts', 'src/main/workflows/run-request.ts', 'src/common/workflow-catalogue.ts',
    // The non-2xx status rule: which types answer HTTP and which branch on a status, their modules say.
    'src/common/status-handling.ts'
  ]
  for (const f of files) {
    let text = fs.readFileSync(path.join(root, f), 'utf8')
    // Comments may name types; so may the workflow seeded for a new proxy (data, not a rule).
    text = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').split('export function defaultDefinition')[0] ?? ''
    const named = types.filter(type => new RegExp(`['"\`]${type}['"\`]`).test(text))
    t.same(named, [], `${f} names no node type`)
  }
})

t.test('reading the descriptions loads neither QuickJS nor the XML parser', async t => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-registry-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const log = path.join(dir, 'resolved.txt')
  const hooks = path.join(dir, 'hooks.mjs')
  fs.writeFileSync(hooks, `import fs from 'node:fs'
export async function resolve (specifier, context, next) { fs.appendFileSync(${JSON.stringify(log)}, specifier + '\\n'); return next(specifier, context) }`)
  const registry = pathToFileURL(path.join(root, 'dist/src/common/workflow-catalogue.js')).href
  const script = `import { register } from 'node:module'
register(${JSON.stringify(pathToFileURL(hooks).href)})
const c = await import(${JSON.stringify(registry)})
console.log(c.NODE_CATALOGUE.length)`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  t.equal(Number(out.trim()), types.length, 'the catalogue loaded')
  const resolved = fs.readFileSync(log, 'utf8').split('\n')
  t.ok(resolved.some(s => s.endsWith('/registry.js')), 'the hook saw the node modules load')
  t.ok(resolved.includes('croner'), 'and the packages they import (cron_trigger checks schedules with croner)')
  t.same(resolved.filter(s => /quickjs|fast-xml-parser/.test(s)), [], 'no run-only library was loaded')
})

t.test('the entry triggers say how their runs start; the trigger supervisor starts exactly the self-starting ones', async t => {
  // Every kind src/main/triggers/ has a starter for (TriggerKind), and no other.
  const started: Record<TriggerKind, true> = { cron_trigger: true, broker_consumer: true, imap_trigger: true }
  t.same([...PRODUCTION_TRIGGER_TYPES].sort(), Object.keys(started).sort())
  t.same([...NON_GATEWAY_TRIGGER_TYPES].sort(), [...Object.keys(started), 'manual_trigger'].sort(), 'gateway requests start none of these')
  t.ok(PRODUCTION_TRIGGER_TYPES.every(k => isProductionKind(k)))
  t.notOk(isProductionKind('http_trigger'))
  for (const n of NODE_TYPES) t.equal(n.startedBy !== undefined, n.description.entry_trigger, `${n.description.type}: startedBy exactly when it is an entry trigger`)
})
