/**
 * A gateway port already in use stops the start: in-process (listen rejects with a line naming
 * the port) and as `npm start` runs (exit 1, that line on stderr), whoever holds the port —
 * another gateway (uWS listens with SO_REUSEPORT, which once let a second one share it
 * silently) or any other process. For every HTTP layer.
 */
import { spawn } from 'node:child_process'
import net from 'node:net'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { createGateway } from '../../../src/main/gateway/index.js'
import { silentLogger } from '../../helpers/db.js'
import { GATEWAY_SERVERS, startGateway } from '../../helpers/gateway.js'
import { createTempDir } from '../../helpers/db.js'
import { freePort } from '../../helpers/ports.js'

const ENTRY = new URL('../../../dist/src/main/index.js', import.meta.url).pathname

async function tryListen (server: string, port: number): Promise<Error | null> {
  const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEWAY_SERVER: server })
  const gateway = createGateway({ config, logger: silentLogger, readiness: async () => ({ ok: true, checks: {} }) })
  try {
    await gateway.listen()
    await gateway.close()
    return null
  } catch (err) {
    await gateway.close()
    return err as Error
  }
}

for (const server of GATEWAY_SERVERS) {
  t.test(`${server}: a second gateway on the same port is refused`, async t => {
    const first = await startGateway(t, {}, { GATEWAY_SERVER: server })
    for (const other of GATEWAY_SERVERS) {
      const err = await tryListen(other, first.port)
      t.ok(err !== null, `a ${other} gateway does not start on a ${server} gateway's port`)
      t.match(err?.message, `The gateway port ${first.port} (PORT) on 127.0.0.1 is already in use`)
    }
    // The first one still answers alone.
    const r = await fetch(`${first.url}/livez`, { headers: { connection: 'close' } })
    t.equal(r.status, 200)
  })

  t.test(`${server}: a port held by another process is refused`, async t => {
    const holder = net.createServer()
    await new Promise<void>(resolve => holder.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise(resolve => holder.close(resolve)))
    const port = (holder.address() as net.AddressInfo).port
    const err = await tryListen(server, port)
    t.match(err?.message, `The gateway port ${port} (PORT) on 127.0.0.1 is already in use`)
  })

  t.test(`${server}: npm start on a busy port exits 1 with one line naming it`, async t => {
    const holder = net.createServer()
    await new Promise<void>(resolve => holder.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise(resolve => holder.close(resolve)))
    const port = (holder.address() as net.AddressInfo).port
    const env = {
      ...process.env, GATEWAY_SERVER: server, PORT: String(port), HOST: '127.0.0.1', MANAGEMENT_PORT: String(await freePort()),
      DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory', LOG_LEVEL: 'silent'
    }
    const out = await new Promise<{ code: number | null, err: string }>(resolve => {
      const p = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'ignore', 'pipe'] })
      let err = ''
      p.stderr.on('data', d => { err += d })
      p.on('exit', code => resolve({ code, err }))
    })
    t.equal(out.code, 1)
    t.equal(out.err.trim().split('\n').length, 1, out.err)
    t.match(out.err, `The gateway port ${port} (PORT) on 127.0.0.1 is already in use by another process`)
  })
}
