/** Emails, credentials and workflows for the imap_trigger tests. */
import type { Dovecot } from '../../helpers/dovecot.js'
import type { WorkflowService } from '../workflows/service.js'
import { edge, node, sleep, triggerRuns } from './cluster.js'

export const eml = (n: number, extra = '') => [
  'From: =?ISO-8859-1?Q?Ren=E9?= <rene@example.test>',
  'To: Orders <orders@example.test>',
  `Subject: =?UTF-8?B?${Buffer.from(`Commande nº${n}`).toString('base64')}?=`,
  'Date: Mon, 23 Nov 2026 08:00:00 +0000',
  `Message-ID: <m${n}.${Date.now()}@example.test>`,
  'MIME-Version: 1.0',
  'Content-Type: multipart/alternative; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=ISO-8859-1',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  `Caf=E9 cr=E8me, order ${n}${extra}`,
  '--b1',
  'Content-Type: text/html; charset=UTF-8',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from(`<p>Café ${n}</p>`).toString('base64'),
  '--b1--',
  ''
].join('\r\n')

export async function imapCredential (w: WorkflowService, d: Dovecot, password = d.password): Promise<string> {
  const r = await w.api('POST', '/credentials', {
    name: `mail-${Math.random().toString(36).slice(2)}`, type: 'imap',
    config: { host: d.host, port: d.port, username: d.user, password, tls: { secure: false, reject_unauthorized: false } }
  }, 'admin')
  if (r.status !== 201) throw new Error(`credential: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id
}

export const imapWorkflow = (credentialsId: string, settings: Record<string, unknown>) => ({
  nodes: [node('mail', 'imap_trigger', { credentials_id: credentialsId, ...settings }), node('note', 'set_node', { values: { subject: '{{mail.subject}}' } })],
  edges: [edge('mail', 'note')],
  runtime_settings: { save_on_success: true, save_on_error: true }
})

export async function runsUntil (w: WorkflowService, workflowId: string, n: number): Promise<any[]> {
  for (let i = 0; i < 300; i++) {
    const runs = await triggerRuns(w, workflowId)
    if (runs.length >= n) return runs
    await sleep(100)
  }
  throw new Error(`fewer than ${n} runs`)
}
