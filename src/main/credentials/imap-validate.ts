/**
 * Live check of an `imap` credential, for `POST /api/v1/credentials/validate`:
 * connect, log in, open the target mailbox read-only, log out. Nothing is
 * saved and nothing is changed on the server (read-only open keeps \Recent
 * and \Seen flags as they are). The whole check is bounded by one timeout and
 * the connection is always closed. Failure messages are built here from the
 * host, port, user and mailbox only: never from the password, and any text
 * quoted from the server is scrubbed of it.
 */
import type { ImapFlowError, ImapFlowOptions } from 'imapflow'
import { loadImapflow } from '../lazy-require.js'
import net from 'node:net'
import type { ImapConfig } from './types.js'

export type ImapFailureReason = 'host_unreachable' | 'tls_failed' | 'login_refused' | 'mailbox_missing' | 'timeout' | 'protocol_error'

export type ImapValidation =
  | { ok: true, mailbox: string, exists: number }
  | { ok: false, reason: ImapFailureReason, message: string }

const TLS_CODES = /^(ERR_SSL_|ERR_TLS_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|ERR_OSSL_|HOSTNAME_MISMATCH)/
const NET_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ECONNRESET', 'EADDRNOTAVAIL', 'NoConnection'])
const TIMEOUT_CODES = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT', 'ETIMEOUT', 'ETIMEDOUT'])

type Stage = 'connect' | 'mailbox'

function classify (err: ImapFlowError, stage: Stage, c: ImapConfig): { reason: ImapFailureReason, message: string } {
  const where = `${c.host}:${c.port}`
  const code = err.code ?? ''
  if (err.authenticationFailed === true) {
    return { reason: 'login_refused', message: `The IMAP server at ${where} refused the login for user "${c.username}"; check the username and password.` }
  }
  if (err.mailboxMissing === true || err.serverResponseCode === 'NONEXISTENT' || (stage === 'mailbox' && err.responseStatus === 'NO')) {
    return { reason: 'mailbox_missing', message: `The mailbox "${c.mailbox}" does not exist for user "${c.username}" on ${where}.` }
  }
  if (TIMEOUT_CODES.has(code)) return timedOut(c)
  if (err.tlsFailed === true || TLS_CODES.test(code) || /SSL|TLS|certificate/i.test(String((err as { library?: string }).library ?? '') + code) ||
    code === 'ClosedAfterConnectTLS') {
    const hint = code.length > 0 ? ` (${code})` : ''
    return { reason: 'tls_failed', message: `The TLS connection to ${where} failed${hint}; check tls.secure, tls.starttls, the port and the server certificate.` }
  }
  if (NET_CODES.has(code)) {
    return { reason: 'host_unreachable', message: `The IMAP server at ${where} could not be reached (${code}).` }
  }
  if (code === 'EConnectionClosed' || code === 'ClosedAfterConnectText') {
    return { reason: 'protocol_error', message: `The server at ${where} closed the connection before the check completed; check that the port is an IMAP port and the TLS settings match it.` }
  }
  return { reason: 'protocol_error', message: `The server at ${where} did not answer as an IMAP server is expected to${code.length > 0 ? ` (${code})` : ''}.` }
}

/** A message a user can act on for an imapflow failure while connecting ('connect') or opening the mailbox; never the password. */
export function imapFailureMessage (err: unknown, stage: Stage, c: ImapConfig): string {
  return scrub(classify(err as ImapFlowError, stage, c).message, c.password)
}

function timedOut (c: ImapConfig) {
  return { reason: 'timeout' as const, message: `The IMAP server at ${c.host}:${c.port} did not answer within the time allowed.` }
}

function scrub (message: string, secret: string): string {
  return secret.length > 0 ? message.split(secret).join('********') : message
}

/**
 * imapflow options for an `imap` credential: TLS mode, certificate checks, login,
 * and every network wait bounded by `timeoutMs`. Logging is off (it would carry
 * the server dialogue). The IMAP trigger uses the same mapping.
 */
export function imapFlowOptions (c: ImapConfig, opts: { timeoutMs: number }): ImapFlowOptions {
  const tls: NonNullable<ImapFlowOptions['tls']> = { rejectUnauthorized: c.tls.reject_unauthorized, minVersion: 'TLSv1.2' }
  if (net.isIP(c.host) === 0) tls.servername = c.host
  return {
    host: c.host,
    port: c.port,
    secure: c.tls.secure,
    ...(c.tls.starttls !== undefined && !c.tls.secure ? { doSTARTTLS: c.tls.starttls } : {}),
    tls,
    auth: { user: c.username, pass: c.password },
    logger: false,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    clientInfo: { name: 'gatehouse' }
  }
}

/** Checks a validated `imap` config against the live server (see module comment). Never throws. */
export async function validateImapCredential (config: ImapConfig, opts: { timeoutMs: number }): Promise<ImapValidation> {
  const c = config
  const { ImapFlow } = loadImapflow()
  const client = new ImapFlow({ ...imapFlowOptions(c, opts), disableAutoIdle: true })
  // imapflow emits 'error' on socket failures; without a listener that would crash the process.
  client.on('error', () => {})

  let stage: Stage = 'connect'
  const check = (async (): Promise<ImapValidation> => {
    await client.connect()
    stage = 'mailbox'
    const box = await client.mailboxOpen(c.mailbox, { readOnly: true })
    await client.logout()
    return { ok: true, mailbox: box.path, exists: box.exists }
  })()
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<ImapValidation>(resolve => {
    timer = setTimeout(() => resolve({ ok: false, ...timedOut(c) }), opts.timeoutMs)
  })
  try {
    return await Promise.race([
      check.catch((err: ImapFlowError): ImapValidation => {
        const { reason, message } = classify(err, stage, c)
        return { ok: false, reason, message: scrub(message, c.password) }
      }),
      deadline
    ])
  } finally {
    clearTimeout(timer)
    client.close()
  }
}
