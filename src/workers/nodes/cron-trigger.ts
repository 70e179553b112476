/**
 * cron_trigger: runs on a schedule (src/main/triggers/cron.ts keeps the schedules);
 * validation checks that the expression, in its time zone, has a next slot.
 */
import { Cron } from 'croner'
import { passTrigger, required, text, trigger } from './describe.js'
import type { NodeType } from './node-type.js'

export const cronTrigger: NodeType = {
  description: trigger('cron_trigger', 'Runs on a schedule while the workflow is enabled and the proxy published; each slot runs once across instances; missed slots are not caught up.', {
    cron_expression: required('a cron expression (5 or 6 fields), e.g. "*/5 * * * *"'),
    timezone: text('an IANA time zone, e.g. "Europe/Paris" (default UTC)'),
    enabled: { type: 'boolean', description: 'false pauses the schedule' }
  }, ['cron_expression'], '{triggered_at (the slot time), trigger: "cron", schedule, timezone, run_id (the execution id)}'),
  run: passTrigger,
  startedBy: 'itself',
  checkSettings: settings => {
    if (typeof settings.cron_expression !== 'string' || settings.cron_expression === '') return []
    try {
      const job = new Cron(settings.cron_expression, { paused: true, timezone: typeof settings.timezone === 'string' && settings.timezone !== '' ? settings.timezone : undefined })
      job.nextRun()
      job.stop()
      return []
    } catch (err) {
      return [['settings.cron_expression', `is not a valid schedule${typeof settings.timezone === 'string' ? ` in time zone '${settings.timezone}'` : ''} (${(err as Error).message.split('. ')[0] ?? ''})`]]
    }
  }
}
