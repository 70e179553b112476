/** The console's static files on the management listener: pages, assets, and everything else left to the API. */
import { mkdir, writeFile } from 'node:fs/promises'
import t from 'tap'
import { loadStaticFiles } from '../../../src/main/static/static-files.js'
import { createTempDir } from '../../helpers/db.js'
import { startManagement } from '../../helpers/management.js'

async function builtConsole (t: Parameters<typeof createTempDir>[0]): Promise<string> {
  const dir = await createTempDir(t)
  await mkdir(`${dir}/assets`)
  await writeFile(`${dir}/index.html`, '<!doctype html><title>console</title>')
  await writeFile(`${dir}/assets/app-1a2b.js`, 'console.log(1)')
  return dir
}

const get = async (url: string, headers: Record<string, string> = {}, method = 'GET') => {
  const res = await fetch(url, { method, headers: { connection: 'close', ...headers } })
  return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), body: await res.text() }
}
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }

t.test('the built console is served where no route answers', async t => {
  const m = await startManagement(t, 'postgres', { consoleFiles: loadStaticFiles(await builtConsole(t), { spa: true }) })
  const root = await get(`${m.url}/`)
  t.match(root, { status: 200, type: /^text\/html/, cache: 'no-cache', body: /<title>console/ })
  t.match(await get(`${m.url}/collections/c_1`, HTML), { status: 200, body: /<title>console/ }, 'a page of the app gets index.html')
  t.match(await get(`${m.url}/assets/app-1a2b.js`), { status: 200, type: /^text\/javascript/, cache: /immutable/, body: 'console.log(1)' })
  t.match(await get(`${m.url}/`, {}, 'HEAD'), { status: 200, body: '' })

  t.match(await get(`${m.url}/assets/gone.js`, HTML), { status: 404, type: /json/ }, 'a missing asset stays a 404')
  t.match(await get(`${m.url}/collections/c_1`), { status: 404, type: /json/ }, 'only browsers asking for a page get index.html')
  t.match(await get(`${m.url}/api/v1/nothing-here`, HTML), { status: 404, type: /json/ }, '/api/ is never the console')
  t.match(await get(`${m.url}/livez`, HTML), { status: 200, type: /json/ }, 'routes win')
  t.match(await get(`${m.url}/api/v1/collections`), { status: 401 })
  t.match(await get(`${m.url}/`, {}, 'POST'), { status: 404, type: /json/ })
})

t.test('without a built console the listener is the API alone', async t => {
  const m = await startManagement(t, 'postgres', { consoleFiles: loadStaticFiles(`${await createTempDir(t)}/missing`, { spa: true }) })
  t.match(await get(`${m.url}/`, HTML), { status: 404, type: /json/ })
})
