/** manual_trigger: runs when started from the builder (the manual-run route). */
import { passTrigger, trigger } from './describe.js'
import type { NodeType } from './node-type.js'

/** The output of a manual start. */
export const manualTriggerOutput = () => ({ triggered_at: new Date().toISOString(), trigger: 'manual' })

export const manualTrigger: NodeType = {
  description: trigger('manual_trigger', 'Runs when started from the builder (POST /api/v1/workflows/:workflowId/manual-run).', {}, [],
    '{triggered_at, trigger: "manual"}'),
  run: passTrigger,
  startedBy: 'builder',
  sampleOutput: manualTriggerOutput
}
