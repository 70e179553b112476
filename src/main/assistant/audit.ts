/**
 * Every tool call the assistant decides becomes an audit row (source `assistant`), reads included:
 * the tool's name, who the assistant acted for, whether it ran at once, after the user's approval,
 * or was declined, and the status it ended with (0 when it was not run). Arguments are not kept:
 * a create_credential's may hold a password.
 */
import type { AuditTrail } from '../management/audit-trail.js'
import type { CallRecord } from './agent.js'

/** The HTTP status a tool's answer reports (the management MCP's error bodies carry it). */
function statusOf (c: CallRecord): number {
  if (c.outcome === 'tool_call_declined') return 0
  if (!c.isError) return 200
  try {
    const s = JSON.parse(c.text)?.status
    if (Number.isInteger(s) && s >= 100 && s <= 599) return s
  } catch {}
  return 502
}

export function auditToolCalls (audit: AuditTrail, who: { actor: string, path: string, remoteAddr: string | null }): (c: CallRecord) => void {
  return c => {
    audit.record([{
      actor_sub: who.actor,
      source: 'assistant',
      action: c.outcome,
      tool: c.tool,
      resource_kind: null,
      // Most tools name their record `id`: get_profile_credentials {client_id, id} names the profile.
      resource_id: typeof c.args.id === 'string' ? c.args.id : null,
      method: null,
      path: who.path,
      status: statusOf(c),
      remote_addr: who.remoteAddr
    }])
  }
}
