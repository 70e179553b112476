/**
 * A real Dovecot IMAP server for tests, run from its own config file in a temp
 * directory and listening on 127.0.0.1 on a free port (scripts/test-services.sh
 * installs Debian's dovecot-imapd). One user, password in a passwd-file, Maildir
 * under the temp directory; `deliver` drops a message in with `doveadm save`.
 *
 * What running it took, found by trying on Debian 12 / Dovecot 2.3:
 * - `dovecot -F -c FILE` with its own base_dir, state_dir and log_path: no part
 *   of the system's /etc/dovecot or /run/dovecot is used, many can run at once.
 * - As root, Dovecot's own processes run as Debian's `dovecot`/`dovenull` users
 *   and refuse mail access with UID 0: the mail user is `nobody`, the Maildir is
 *   chowned to it, and the temp dir is made 0755 so those users can reach the
 *   passwd-file and the Maildir. As another user, every process runs as that
 *   user and its group (default_internal_user, default_login_user,
 *   default_internal_group: Dovecot chowns some sockets to that group),
 *   with first_valid_uid lowered to its UID.
 * - Plaintext login on loopback (`ssl = no`, `disable_plaintext_auth = no`) by
 *   default. With `{ tls: true }`: a self-signed certificate made with openssl,
 *   STARTTLS offered on `port` and implicit TLS on `tlsPort`.
 * - `chroot =` for imap-login and anvil: only root may chroot.
 * - `auth_failure_delay = 0` and mode 0 on anvil's `anvil-auth-penalty` socket:
 *   otherwise each failed login from 127.0.0.1 delays the following logins by
 *   seconds, and a wrong-password test stalls the tests after it.
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from './ports.js'

export interface Dovecot {
  host: string
  port: number
  /** Implicit-TLS port; only with `{ tls: true }`. */
  tlsPort?: number
  user: string
  password: string
  /** The self-signed certificate (PEM) when started with `{ tls: true }`. */
  certPem?: string
  deliver (rawEml: string, mailbox?: string): Promise<void>
  createMailbox (name: string): Promise<void>
  /** Deletes a mailbox and its messages (created again, it gets a new UIDVALIDITY). */
  deleteMailbox (name: string): Promise<void>
  /** The IMAP flags of the message with this UID (for example ['\\Seen']). */
  flags (uid: number, mailbox?: string): Promise<string[]>
  stop (): Promise<void>
}

const HOST = '127.0.0.1'

function run (cmd: string, args: string[], input?: string): Promise<{ code: number | null, out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (b: Buffer) => { out += b.toString() })
    child.stderr.on('data', (b: Buffer) => { out += b.toString() })
    child.once('error', reject)
    child.once('close', code => resolve({ code, out }))
    child.stdin.end(input ?? '')
  })
}

function idOf (name: string, flag: '-u' | '-g'): number {
  const r = spawnSync('id', [flag, name], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`user ${name} does not exist`)
  return Number(r.stdout.trim())
}

async function greets (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const sock = net.connect(port, HOST)
    sock.setTimeout(1000)
    sock.once('data', b => { sock.destroy(); resolve(b.toString().startsWith('* OK')) })
    sock.once('error', () => resolve(false))
    sock.once('timeout', () => { sock.destroy(); resolve(false) })
  })
}

function groupName (): string {
  const r = spawnSync('id', ['-gn'], { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : String(os.userInfo().gid)
}

/** `idle: false` leaves IDLE out of the advertised capabilities (clients then poll). */
export async function startDovecot (opts: { tls?: boolean, idle?: boolean } = {}): Promise<Dovecot> {
  if (spawnSync('dovecot', ['--version']).status !== 0) {
    throw new Error('dovecot is not installed: run scripts/test-services.sh (as root)')
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-dovecot-'))
  await chmod(dir, 0o755)
  const isRoot = process.getuid?.() === 0
  const mailUser = isRoot ? 'nobody' : os.userInfo().username
  const uid = isRoot ? idOf('nobody', '-u') : os.userInfo().uid
  const gid = isRoot ? idOf('nobody', '-g') : os.userInfo().gid
  const user = 'alice'
  const password = 'imap-test-' + Math.random().toString(36).slice(2)
  const port = await freePort()
  const tlsPort = opts.tls === true ? await freePort() : undefined
  const conf = path.join(dir, 'dovecot.conf')
  const mailRoot = path.join(dir, 'mail')
  await mkdir(path.join(mailRoot, user), { recursive: true })
  if (isRoot) {
    await chown(mailRoot, uid, gid)
    await chown(path.join(mailRoot, user), uid, gid)
  }
  await writeFile(path.join(dir, 'users'), `${user}:{PLAIN}${password}:${uid}:${gid}::${path.join(mailRoot, user)}::\n`, { mode: 0o644 })

  let certPem: string | undefined
  if (tlsPort !== undefined) {
    const made = await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')])
    if (made.code !== 0) throw new Error('openssl could not make a test certificate: ' + made.out)
    certPem = await readFile(path.join(dir, 'cert.pem'), 'utf8')
  }
  await writeFile(conf, [
    'protocols = imap',
    `listen = ${HOST}`,
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `instance_name = gatehouse-test-${port}`,
    `log_path = ${dir}/dovecot.log`,
    'disable_plaintext_auth = no',
    'auth_mechanisms = plain login',
    'auth_failure_delay = 0',
    `first_valid_uid = ${Math.min(uid, 500)}`,
    ...(isRoot ? [] : [`default_internal_user = ${mailUser}`, `default_login_user = ${mailUser}`, `default_internal_group = ${groupName()}`]),
    ...(tlsPort !== undefined
      ? ['ssl = yes', `ssl_cert = <${dir}/cert.pem`, `ssl_key = <${dir}/key.pem`]
      : ['ssl = no']),
    `passdb {\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u ${dir}/users\n}`,
    `userdb {\n  driver = passwd-file\n  args = username_format=%u ${dir}/users\n}`,
    `mail_location = maildir:${mailRoot}/%u`,
    ...(opts.idle === false ? ['imap_capability = IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE LITERAL+ UIDPLUS'] : []),
    // Mode 0 on this socket turns off the growing delay after failed logins (Dovecot's documented switch).
    'service anvil {\n  chroot =\n  unix_listener anvil-auth-penalty {\n    mode = 0\n  }\n}',
    // No chroot: an unprivileged master cannot chroot its children, and tests gain nothing from it.
    'service imap-login {',
    '  chroot =',
    `  inet_listener imap {\n    address = ${HOST}\n    port = ${port}\n  }`,
    `  inet_listener imaps {\n    address = ${HOST}\n    port = ${tlsPort ?? 0}\n  }`,
    '}',
    ''
  ].join('\n'))
  await mkdir(path.join(dir, 'run'))
  await mkdir(path.join(dir, 'state'))

  const child = spawn('dovecot', ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString() })
  let exited = false
  const exit = new Promise<void>(resolve => child.once('exit', () => { exited = true; resolve() }))
  const log = async () => stderr + await readFile(path.join(dir, 'dovecot.log'), 'utf8').catch(() => '')

  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exit
      clearTimeout(killer)
    }
    await rm(dir, { recursive: true, force: true })
  }

  let up = false
  const deadline = Date.now() + 60_000
  while (!up && !exited && Date.now() < deadline) {
    up = await greets(port)
    if (!up) await sleep(50)
  }
  if (!up) {
    const text = await log()
    await stop()
    throw new Error('dovecot did not start:\n' + text)
  }

  const doveadm = async (args: string[], input?: string) => await run('doveadm', ['-c', conf, ...args], input)
  const createMailbox = async (name: string) => {
    const r = await doveadm(['mailbox', 'create', '-u', user, name])
    if (r.code !== 0 && !/exists/i.test(r.out)) throw new Error(`doveadm mailbox create ${name} failed: ${r.out}`)
  }
  return {
    host: HOST,
    port,
    ...(tlsPort !== undefined ? { tlsPort } : {}),
    ...(certPem !== undefined ? { certPem } : {}),
    user,
    password,
    createMailbox,
    async deleteMailbox (name) {
      const r = await doveadm(['mailbox', 'delete', '-u', user, '-r', name])
      if (r.code !== 0) throw new Error(`doveadm mailbox delete ${name} failed: ${r.out}`)
    },
    async flags (uid, mailbox = 'INBOX') {
      const r = await doveadm(['fetch', '-u', user, 'flags', 'mailbox', mailbox, 'uid', String(uid)])
      if (r.code !== 0) throw new Error(`doveadm fetch failed: ${r.out}`)
      return (/flags:(.*)/.exec(r.out)?.[1] ?? '').trim().split(/\s+/).filter(Boolean)
    },
    async deliver (rawEml: string, mailbox = 'INBOX') {
      if (mailbox.toUpperCase() !== 'INBOX') await createMailbox(mailbox)
      const r = await doveadm(['save', '-u', user, '-m', mailbox], rawEml)
      if (r.code !== 0) throw new Error(`doveadm save failed (${String(r.code)}): ${r.out}`)
    },
    stop
  }
}
