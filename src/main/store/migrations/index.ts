/**
 * Versioned schema migrations, applied in order at start. To add one: append
 * `{ version: <next integer>, name, sql }` to MIGRATIONS (never edit an applied
 * one). The SQL must run on PostgreSQL 15 and on the embedded PGlite (PG 18):
 * avoid int8 columns (they come back as different JS types) and extensions.
 */
import { m001Core } from './001-core.js'
import { m002Access } from './002-access.js'
import { m004RequestLogs } from './004-request-logs.js'
import { m005ProxyBodyLimit } from './005-proxy-body-limit.js'
import { m003ThreadsAudit } from './003-threads-audit.js'
import { m006WorkflowVersions } from './006-workflow-versions.js'
import { m007Executions } from './007-executions.js'
import { m008ImapTriggerState } from './008-imap-trigger-state.js'
import { m009ConfigChanges } from './009-config-changes.js'
import { m010BrokerTriggerState } from './010-broker-trigger-state.js'
import { m011RequestLogIndexes } from './011-request-log-indexes.js'
import { m012RequestLogClientIndex } from './012-request-log-client-index.js'
import { m013ResponseSettings } from './013-response-settings.js'
import { m014AuditAssistant } from './014-audit-assistant.js'
import { m015CollectionUpstream } from './015-collection-upstream.js'
import { m016ParameterDefaults } from './016-parameter-defaults.js'
import { m017TraceIds } from './017-trace-ids.js'
import { m018ProxyWebsocket } from './018-proxy-websocket.js'
import { m019QuotaCounters } from './019-quota-counters.js'
import { m020AuditConfigFile } from './020-audit-config-file.js'

/** `embeddedSql`, when given, is what the embedded store runs instead of `sql`. */
export interface Migration { version: number, name: string, sql: string, embeddedSql?: string }

export const MIGRATIONS: readonly Migration[] = [
  m001Core,
  m002Access,
  m004RequestLogs,
  m003ThreadsAudit,
  m005ProxyBodyLimit,
  m006WorkflowVersions,
  m007Executions,
  m008ImapTriggerState,
  m009ConfigChanges,
  m010BrokerTriggerState,
  m011RequestLogIndexes,
  m012RequestLogClientIndex,
  m013ResponseSettings,
  m014AuditAssistant,
  m015CollectionUpstream,
  m016ParameterDefaults,
  m017TraceIds,
  m018ProxyWebsocket,
  m019QuotaCounters,
  m020AuditConfigFile
]
