// The reference Node.js peer for bench/peers.mjs: fastify 5 with @fastify/http-proxy (undici,
// keep-alive pool to the backend), forwarding /open/* to the backend with the same added headers
// as the other contenders (X-Team, X-Forwarded-For). No logger: fastify's default.
//   node bench/peer-fastify.mjs <port> <backend port>
import Fastify from 'fastify'
import proxy from '@fastify/http-proxy'

const [port, backendPort] = process.argv.slice(2).map(Number)
const app = Fastify({ logger: false })
await app.register(proxy, {
  upstream: `http://127.0.0.1:${backendPort}`,
  prefix: '/open',
  rewritePrefix: '',
  // undici keep-alive: the same pooled, reused connections the other contenders keep to the backend.
  undici: { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 },
  replyOptions: {
    rewriteRequestHeaders: (req, headers) => ({ ...headers, 'x-team': 'bench', 'x-forwarded-for': req.ip })
  }
})
await app.listen({ port, host: '127.0.0.1' })
process.send?.('ready')
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
