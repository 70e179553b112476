/**
 * The workflows and triggers subsystem: the worker pool, the runner, trigger test-listens and
 * the production triggers (cron, broker, IMAP). The gateway runs proxies' workflows through
 * `gatewayWorkflows`; management routes run, listen to and inspect them.
 */
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { escapeLabel, type Metrics } from '../observability/metrics.js'
import type { MailboxStats } from '../../actors/mailbox.js'
import type { Tracer } from '../observability/tracing/tracer.js'
import type { HttpCredential } from '../../workers/engine/types.js'
import { openConfig } from '../credentials/secret-fields.js'
import type { CredentialType } from '../credentials/types.js'
import { createWorkflowPool, RUNS_PER_WORKER, type WorkflowPool } from '../workflows/pool.js'
import { createRunner, type Runner } from '../workflows/runner.js'
import { createTriggerListens, type TriggerListens } from '../workflows/trigger-listen.js'
import { gatewayWorkflows } from '../workflows/listen-gateway.js'
import { createTriggers, type Triggers } from '../triggers/index.js'
import type { RouteReloader } from '../routes/reloader.js'
import type { ConfigConsumer } from './config-reload.js'
import type { StoreSubsystem } from './store.js'
import type { Subsystem } from './subsystem.js'

export interface WorkflowsSubsystem extends Subsystem {
  pool: WorkflowPool
  runner: Runner
  listens: TriggerListens
  triggers: Triggers
  /** What the gateway calls to run a proxy's workflow (a trigger test-listen captures the run). */
  gateway: ReturnType<typeof gatewayWorkflows>
  /** The first workflow served starts the worker thread, before its first request needs it. */
  warmUp: ConfigConsumer
  /** Every reload reconciles production triggers: the route table's proxies are exactly the served ones. */
  reconcile: ConfigConsumer
  /** Every served workflow proxy's mailbox limits come from its definition; the mailboxes of proxies that went are forgotten. */
  mailboxes: ConfigConsumer
}

export interface WorkflowsOptions {
  config: Readonly<Config>
  logger: Logger
  store: StoreSubsystem
  metrics: Metrics
  tracer: Tracer | null
  /** The served configuration: its version keys the runner's caches; a listen change re-applies its proxy. */
  routes: Pick<RouteReloader, 'version' | 'refresh'>
}

export function startWorkflows ({ config, logger, store: s, metrics, tracer, routes }: WorkflowsOptions): WorkflowsSubsystem {
  const { store, shared, hub, secretsKey } = s
  const pool = createWorkflowPool(config.WORKERS)
  const runner = createRunner({
    store, pool, logger, kv: shared.kv, tracer,
    outboundAllowlist: config.OUTBOUND_ALLOWLIST,
    keepPerWorkflow: config.EXECUTIONS_PER_WORKFLOW,
    credentials: async ids => await openHttpCredentials(store, secretsKey, ids),
    // Sub-workflows and opened credentials are read once per saved definition, until any change.
    configVersion: () => routes.version,
    // Half the pool's run slots per proxy by default: a flood on one proxy leaves the other half to the rest.
    defaultLimits: { maxQueue: 100, maxConcurrent: Math.max(2, config.WORKERS * RUNS_PER_WORKER / 2) }
  })
  // A listen session started or ended: its proxy's route is overlaid again at once (no store change).
  const listens = createTriggerListens({ onChange: proxyId => { routes.refresh(proxyId) } })
  const triggers = createTriggers({ store, runner, hub, kv: shared.kv, locks: shared.locks, logger, secretsKey, heartbeatMs: config.TRIGGER_HEARTBEAT_MS })
  metrics.addSource(() => triggers.prometheus())
  metrics.addSource(() => {
    const n = pool.running()
    return '# HELP gatehouse_workflow_threads Worker threads running workflows, by lane (they start with the first workflow served).\n# TYPE gatehouse_workflow_threads gauge\n' +
      `gatehouse_workflow_threads{lane="light"} ${n.light}\ngatehouse_workflow_threads{lane="cpu"} ${n.cpu}\n`
  })
  metrics.addSource(() => mailboxMetrics(runner.mailboxes.stats()))

  return {
    pool,
    runner,
    listens,
    triggers,
    gateway: gatewayWorkflows(runner, listens),
    warmUp: {
      name: 'workflow pool warm-up',
      apply: ({ full, delta, view }) => {
        if ((full ? view.proxies() : delta.proxies).some(p => p.workflow_enabled && p.workflow !== null)) pool.warm()
      }
    },
    reconcile: {
      name: 'triggers',
      apply: ({ full, delta, view }) => {
        void (full ? triggers.supervisor.reconcileAll(view.proxies()) : triggers.supervisor.reconcile(delta.proxies, delta.removedProxies))
      }
    },
    mailboxes: {
      name: 'workflow mailboxes',
      // A full update lists every served proxy and every one that went, a delta what changed: either way O(update).
      apply: ({ delta }) => {
        for (const id of delta.removedProxies) runner.mailboxes.forget(id)
        for (const p of delta.proxies) {
          if (p.workflow !== null) runner.mailboxes.configure(p.id, runner.limitsOf(p.workflow))
          else runner.mailboxes.forget(p.id)
        }
      }
    },
    async close () {
      await triggers.close()
      listens.close()
      await pool.close().catch(() => {})
      await runner.settled()
    }
  }
}

/** The mailboxes held now: runs waiting and in flight, refusals and limits, by proxy. */
function mailboxMetrics (stats: Record<string, MailboxStats>): string {
  const ids = Object.keys(stats)
  if (ids.length === 0) return ''
  const l = (id: string) => `proxy_id="${escapeLabel(id)}"`
  const out = ['# HELP gatehouse_workflow_mailbox_runs Workflow runs in a proxy\'s mailbox, by state (running: in the worker pool, queued: waiting for a slot).', '# TYPE gatehouse_workflow_mailbox_runs gauge']
  for (const id of ids) out.push(`gatehouse_workflow_mailbox_runs{${l(id)},state="running"} ${stats[id]!.running}`, `gatehouse_workflow_mailbox_runs{${l(id)},state="queued"} ${stats[id]!.queued}`)
  out.push('# HELP gatehouse_workflow_mailbox_limit A proxy\'s mailbox limits (runtime_settings max_concurrency and max_queue, or the defaults).', '# TYPE gatehouse_workflow_mailbox_limit gauge')
  for (const id of ids) out.push(`gatehouse_workflow_mailbox_limit{${l(id)},limit="max_concurrency"} ${stats[id]!.max_concurrency}`, `gatehouse_workflow_mailbox_limit{${l(id)},limit="max_queue"} ${stats[id]!.max_queue}`)
  out.push('# HELP gatehouse_workflow_mailbox_rejected_total Workflow runs refused with 503 because the proxy\'s mailbox was full.', '# TYPE gatehouse_workflow_mailbox_rejected_total counter')
  for (const id of ids) out.push(`gatehouse_workflow_mailbox_rejected_total{${l(id)}} ${stats[id]!.rejected}`)
  return out.join('\n') + '\n'
}

/** The HTTP credentials among `ids`, opened for one run (a missing or unreadable one is left out: its node fails saying so). */
async function openHttpCredentials (store: Store, key: Buffer, ids: string[]): Promise<Record<string, HttpCredential>> {
  const { rows } = await store.query<{ id: string, type: string, config: unknown }>('SELECT id, type, config FROM credentials WHERE id = ANY($1::text[])', [ids])
  const out: Record<string, HttpCredential> = {}
  for (const r of rows) {
    if (!HTTP_CREDENTIAL_TYPES.has(r.type)) continue
    try { out[r.id] = { type: r.type, config: openConfig(key, r.type as CredentialType, typeof r.config === 'string' ? JSON.parse(r.config) : r.config, r.id) } as HttpCredential } catch {}
  }
  return out
}
const HTTP_CREDENTIAL_TYPES = new Set(['http_basic', 'http_bearer', 'http_header', 'oauth2_client_credentials'])
