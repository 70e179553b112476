/**
 * Every workflow node type, in catalogue order. Adding a type: write its module
 * (node-type.ts says what it exports) and list it here; the engine, validation
 * and the catalogue route pick it up. Both threads import this list.
 */
import type { NodeType } from './node-type.js'
import { httpTrigger } from './http-trigger.js'
import { manualTrigger } from './manual-trigger.js'
import { cronTrigger } from './cron-trigger.js'
import { brokerConsumer } from './broker-consumer.js'
import { imapTrigger } from './imap-trigger.js'
import { httpRequestNode } from './http-request-node.js'
import { parallelNode } from './parallel-node.js'
import { mergeNode } from './merge-node.js'
import { setNode } from './set-node.js'
import { conditionNode } from './condition-node.js'
import { delayNode } from './delay-node.js'
import { responseNode } from './response-node.js'
import { loopNode } from './loop-node.js'
import { xmlNode } from './xml-node.js'
import { executeSubworkflow } from './execute-subworkflow.js'
import { codeNode } from './code-node.js'
import { cacheLookupNode } from './cache-lookup-node.js'

export const NODE_TYPES: readonly NodeType[] = [
  httpTrigger, manualTrigger, cronTrigger, brokerConsumer, imapTrigger,
  httpRequestNode, parallelNode, mergeNode, setNode, conditionNode, delayNode, responseNode,
  loopNode, xmlNode, executeSubworkflow, codeNode, cacheLookupNode
]

const BY_TYPE: ReadonlyMap<string, NodeType> = new Map(NODE_TYPES.map(t => [t.description.type, t]))

/** The node type named `type`, or undefined for a type this version does not know. */
export function nodeType (type: string): NodeType | undefined {
  return BY_TYPE.get(type)
}

/** Whether `type` is an entry trigger (its input is the run's trigger output). */
export const isEntryTrigger = (type: string): boolean => BY_TYPE.get(type)?.description.entry_trigger === true

/** The handles a node's outgoing edges may use; null: a single output (any handle name is ignored). */
export function sourceHandlesOf (node: { type: string, settings?: Record<string, unknown> }): { handles: string[], required: boolean } | null {
  const t = BY_TYPE.get(node.type)
  if (t === undefined) return null
  if (t.sourceHandles !== undefined) return t.sourceHandles(node.settings ?? {})
  const d = t.description
  return d.supported_source_handles.length === 0 ? null : { handles: d.supported_source_handles, required: d.requires_source_handle }
}

/** Whether an edge leaving `type` on `handle` enters a loop body (cycles may pass through it). */
export function isBodyHandle (type: string, handle: string | null | undefined): boolean {
  return BY_TYPE.get(type)?.bodyHandles?.includes(handle ?? '') === true
}
