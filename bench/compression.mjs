// What compressing an answer costs, as the gateway does it (dist/…/responses/compression.js: node:zlib's
// asynchronous gzip at level 6 and Brotli at quality 4, on libuv's thread pool): JSON bodies of
// 2 KB, 16 KB, 256 KB and 2 MB, 8 in flight, 3 alternating rounds per size. Prints CPU µs per KB
// of input and per answer (this process, all threads: the thread pool included), wall µs per
// answer and the compressed size. Run after `npm run build`:
//   node bench/compression.mjs
import { compress } from '../dist/src/main/gateway/responses/compression.js'

const SIZES = [2 * 1024, 16 * 1024, 256 * 1024, 2 * 1024 * 1024]
const IN_FLIGHT = 8
const ROUNDS = 3

function json (bytes) {
  const items = []
  let i = 0
  let s = ''
  while (s.length < bytes) { items.push({ id: i, name: `item ${i}`, price: (i * 37) % 1000, tags: ['new', i % 3 ? 'sale' : 'full'], stock: i % 17 }); i++; if (i % 50 === 0) s = JSON.stringify({ items }) }
  return Buffer.from(JSON.stringify({ items }).slice(0, bytes))
}

async function run (body, enc, total) {
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  let out = 0
  let started = 0
  await new Promise((resolve, reject) => {
    let done = 0
    const next = () => {
      if (started === total) return
      started++
      compress(body, enc, (err, r) => {
        if (err !== null) { reject(err); return }
        out = r.length
        if (++done === total) resolve(); else next()
      })
    }
    for (let i = 0; i < IN_FLIGHT; i++) next()
  })
  const cpu = process.cpuUsage(cpu0)
  const us = cpu.user + cpu.system
  return { cpuPerKb: us / total / (body.length / 1024), cpuUs: us / total, wallUs: (performance.now() - wall0) * 1000 / total, ratio: out / body.length }
}

const median = a => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
console.log('| Size | Encoding | CPU µs per KB | CPU µs per answer | wall µs per answer (8 in flight) | compressed to |')
console.log('|---:|---|---:|---:|---:|---:|')
for (const size of SIZES) {
  const body = json(size)
  const total = Math.max(20, Math.round(64 * 1024 * 1024 / size / 4))
  const res = { gzip: [], br: [] }
  for (let r = 0; r < ROUNDS; r++) for (const enc of r % 2 === 0 ? ['gzip', 'br'] : ['br', 'gzip']) res[enc].push(await run(body, enc, total))
  for (const enc of ['gzip', 'br']) {
    const rs = res[enc]
    console.log(`| ${size >= 1024 * 1024 ? `${size / 1024 / 1024} MB` : `${size / 1024} KB`} | ${enc} | ${median(rs.map(x => x.cpuPerKb)).toFixed(2)} | ${Math.round(median(rs.map(x => x.cpuUs)))} | ${Math.round(median(rs.map(x => x.wallUs)))} | ${(rs[0].ratio * 100).toFixed(1)} % |`)
  }
}
