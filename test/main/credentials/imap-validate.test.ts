import t, { type Test } from 'tap'
import net from 'node:net'
import { imapFlowOptions, validateImapCredential, type ImapValidation } from '../../../src/main/credentials/imap-validate.js'
import { validateCredentialInput } from '../../../src/main/credentials/schemas.js'
import type { ImapConfig } from '../../../src/main/credentials/types.js'
import { startDovecot, type Dovecot } from '../../helpers/dovecot.js'
import { freePort } from '../../helpers/ports.js'

const eml = (subject: string) => `From: sender@example.test\r\nTo: alice@example.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@example.test>\r\n\r\nHello.\r\n`
const opts = { timeoutMs: 30_000 }

/** Every failure message seen, checked at the end for the passwords. */
const messages: string[] = []
const checked = async (config: ImapConfig, o = opts): Promise<ImapValidation> => {
  const r = await validateImapCredential(config, o)
  if (!r.ok) messages.push(r.message)
  return r
}

function imapConfig (d: Dovecot, over: Partial<ImapConfig> = {}): ImapConfig {
  const config = { host: d.host, port: d.port, username: d.user, password: d.password, tls: { secure: false, reject_unauthorized: true }, ...over }
  const details = validateCredentialInput('imap', config)
  if (details.length > 0) throw new Error('test config is not a valid credential: ' + JSON.stringify(details))
  return config as ImapConfig
}

/** A loopback server that accepts and answers with `greeting` (or stays silent). */
async function fakeServer (t: Test, greeting?: string): Promise<number> {
  const sockets = new Set<net.Socket>()
  const srv = net.createServer(s => {
    sockets.add(s)
    s.on('error', () => {})
    if (greeting !== undefined) s.end(greeting)
  })
  await new Promise<void>(resolve => srv.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { for (const s of sockets) s.destroy(); srv.close() })
  return (srv.address() as net.AddressInfo).port
}

t.test('against a plaintext Dovecot on loopback', async t => {
  const d = await startDovecot()
  t.teardown(d.stop)
  await d.deliver(eml('first'))
  await d.deliver(eml('second'))
  await d.deliver(eml('invoice'), 'Invoices')

  t.test('valid credentials: the mailbox and its message count', async t => {
    t.same(await checked(imapConfig(d)), { ok: true, mailbox: 'INBOX', exists: 2 })
    t.same(await checked(imapConfig(d, { mailbox: 'Invoices' })), { ok: true, mailbox: 'Invoices', exists: 1 })
    t.same(await checked(imapConfig(d)), { ok: true, mailbox: 'INBOX', exists: 2 }, 'read-only: nothing changed')
  })

  t.test('a wrong password is login_refused', async t => {
    const r = await checked(imapConfig(d, { password: 'wrong-' + d.password }))
    t.match(r, { ok: false, reason: 'login_refused', message: /refused the login for user "alice"/ })
    t.match(await checked(imapConfig(d, { username: 'mallory' })), { ok: false, reason: 'login_refused' })
  })

  t.test('a mailbox that does not exist is mailbox_missing', async t => {
    t.match(await checked(imapConfig(d, { mailbox: 'Nope/Missing' })), { ok: false, reason: 'mailbox_missing', message: /The mailbox "Nope\/Missing" does not exist/ })
  })

  t.test('implicit TLS against a plaintext port is tls_failed', async t => {
    t.match(await checked(imapConfig(d, { tls: { secure: true, reject_unauthorized: false } })), { ok: false, reason: 'tls_failed' })
  })

  t.test('required STARTTLS that the server does not offer is tls_failed', async t => {
    t.match(await checked(imapConfig(d, { tls: { secure: false, starttls: true, reject_unauthorized: false } })), { ok: false, reason: 'tls_failed' })
  })

  t.test('no failure message holds a password', async t => {
    t.ok(messages.length >= 5)
    for (const m of messages) t.notMatch(m, d.password, m)
  })
})

t.test('against Dovecot with a self-signed certificate', async t => {
  const d = await startDovecot({ tls: true })
  t.teardown(d.stop)
  await d.deliver(eml('tls'))

  t.test('STARTTLS and implicit TLS work when certificate checks are off', async t => {
    t.same(await checked(imapConfig(d, { tls: { secure: false, starttls: true, reject_unauthorized: false } })), { ok: true, mailbox: 'INBOX', exists: 1 })
    t.same(await checked(imapConfig(d, { port: d.tlsPort!, tls: { secure: true, reject_unauthorized: false } })), { ok: true, mailbox: 'INBOX', exists: 1 })
  })

  t.test('an untrusted certificate is tls_failed when checks are on', async t => {
    const r = await checked(imapConfig(d, { port: d.tlsPort!, tls: { secure: true, reject_unauthorized: true } }))
    t.match(r, { ok: false, reason: 'tls_failed', message: /TLS connection to 127\.0\.0\.1:\d+ failed/ })
    t.match(await checked(imapConfig(d, { tls: { secure: false, reject_unauthorized: true } })), { ok: false, reason: 'tls_failed' }, 'opportunistic STARTTLS checks too')
  })

  t.test('a wrong password over TLS is still login_refused, without the password', async t => {
    const wrong = 'wrong-' + d.password
    const r = await checked(imapConfig(d, { password: wrong, tls: { secure: false, starttls: true, reject_unauthorized: false } }))
    t.match(r, { ok: false, reason: 'login_refused' })
    if (!r.ok) t.notMatch(r.message, wrong)
  })
})

t.test('without a working IMAP server', async t => {
  const base = { host: '127.0.0.1', username: 'alice', password: 'not-sent-anywhere-123', tls: { secure: false, reject_unauthorized: true }, mailbox: 'INBOX' }

  t.test('nothing listening on the port is host_unreachable', async t => {
    const port = await freePort()
    t.match(await checked({ ...base, port }), { ok: false, reason: 'host_unreachable', message: `The IMAP server at 127.0.0.1:${port} could not be reached` })
  })

  t.test('a server that never greets is timeout', async t => {
    const port = await fakeServer(t)
    t.match(await checked({ ...base, port }, { timeoutMs: 300 }), { ok: false, reason: 'timeout' })
  })

  t.test('a server speaking another protocol is refused, not trusted', async t => {
    const port = await fakeServer(t, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
    const r = await checked({ ...base, port })
    t.match(r, { ok: false, reason: 'protocol_error', message: /closed the connection before the check completed/ })
  })

  t.test('no message holds the password', async t => {
    for (const m of messages) t.notMatch(m, base.password, m)
  })
})

t.test('credential TLS settings map onto imapflow options', async t => {
  const base = { host: 'mail.example.test', port: 993, username: 'u', password: 'p', mailbox: 'INBOX' }
  const o = imapFlowOptions({ ...base, tls: { secure: true, reject_unauthorized: true } }, { timeoutMs: 1000 })
  t.match(o, { secure: true, logger: false, tls: { rejectUnauthorized: true, servername: 'mail.example.test' }, connectionTimeout: 1000, greetingTimeout: 1000, socketTimeout: 1000 })
  t.notOk('doSTARTTLS' in o)
  t.equal(imapFlowOptions({ ...base, tls: { secure: false, starttls: true, reject_unauthorized: true } }, { timeoutMs: 1 }).doSTARTTLS, true)
  t.equal(imapFlowOptions({ ...base, tls: { secure: false, starttls: false, reject_unauthorized: false } }, { timeoutMs: 1 }).doSTARTTLS, false)
  t.notOk('servername' in (imapFlowOptions({ ...base, host: '127.0.0.1', tls: { secure: true, reject_unauthorized: false } }, { timeoutMs: 1 }).tls ?? {}), 'no SNI for an IP address')
})
