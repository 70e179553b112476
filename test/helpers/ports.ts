/** A port nothing listens on right now (taken from the OS, then released): for servers to start on, or to find nobody home. */
import net from 'node:net'

export async function freePort (host = '127.0.0.1'): Promise<number> {
  const srv = net.createServer()
  await new Promise<void>((resolve, reject) => { srv.once('error', reject); srv.listen(0, host, resolve) })
  const { port } = srv.address() as net.AddressInfo
  await new Promise(resolve => srv.close(resolve))
  return port
}
