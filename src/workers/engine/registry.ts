/** Node type → run function. Triggers pass the run's trigger output on. */
import type { NodeContext, NodeResult } from './types.js'
import { passTrigger, runCondition, runDelay, runMerge, runParallel, runResponse, runSet } from '../nodes/basic.js'
import { runHttpRequest } from '../nodes/http-request.js'
import { runLoop } from '../nodes/loop.js'
import { runCacheLookup } from '../nodes/cache-lookup.js'
import { runSubworkflow } from '../nodes/subworkflow.js'

export type Runner = (ctx: NodeContext) => Promise<NodeResult>

export const TRIGGERS = new Set(['http_trigger', 'manual_trigger', 'cron_trigger', 'broker_consumer', 'imap_trigger'])

export const RUNNERS: Record<string, Runner> = {
  http_trigger: passTrigger,
  manual_trigger: passTrigger,
  cron_trigger: passTrigger,
  broker_consumer: passTrigger,
  imap_trigger: passTrigger,
  set_node: runSet,
  condition_node: runCondition,
  response_node: runResponse,
  delay_node: runDelay,
  parallel_node: runParallel,
  merge_node: runMerge,
  http_request_node: runHttpRequest,
  loop_node: runLoop,
  cache_lookup_node: runCacheLookup,
  // Loaded on first use: a worker that never meets these nodes never loads QuickJS or the XML parser.
  xml_node: async ctx => await (await import('../nodes/xml.js')).runXml(ctx),
  execute_subworkflow: runSubworkflow,
  code_node: async ctx => await (await import('../nodes/code.js')).runCode(ctx)
}
