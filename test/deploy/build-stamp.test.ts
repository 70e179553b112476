/**
 * `npm start` rebuilds only when the build's inputs changed (scripts/build-stamp.mjs): a tree with
 * every output and a matching digest is current; a changed, added or removed input, or a missing
 * output, is not.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { createTempDir } from '../helpers/db.js'

const run = promisify(execFile)
const script = new URL('../../scripts/build-stamp.mjs', import.meta.url).pathname

async function current (root: string): Promise<{ ok: boolean, says: string }> {
  try {
    const { stdout } = await run(process.execPath, [script, 'current', '--root', root])
    return { ok: true, says: stdout.trim() }
  } catch (err) {
    return { ok: false, says: String((err as { stdout?: string }).stdout ?? '').trim() }
  }
}

t.test('a build is current until an input or an output changes', async t => {
  const root = await createTempDir(t)
  const put = (rel: string, text: string) => { fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true }); fs.writeFileSync(path.join(root, rel), text) }
  put('src/main/index.ts', 'export {}\n')
  put('console/app/index.html', '<main></main>\n')
  put('console/node_modules/x/index.js', 'ignored\n')
  put('package.json', '{}\n')
  put('package-lock.json', '{}\n')
  put('tsconfig.json', '{}\n')
  for (const out of ['dist/src/main/index.js', 'dist/ui/console/index.html', 'dist/ui/portal/index.html', 'dist/pglite-template.version']) put(out, 'built\n')

  t.match(await current(root), { ok: false, says: /sources changed/ }, 'never stamped: build')
  await run(process.execPath, [script, 'write', '--root', root])
  t.match(await current(root), { ok: true, says: /current/ }, 'stamped after a build: no rebuild')
  t.equal((await run(process.execPath, [script, '--root', root, 'current']).then(() => 0, (e: { code: number }) => e.code)), 0, 'the mode may follow --root')

  put('console/node_modules/x/index.js', 'changed\n')
  t.equal((await current(root)).ok, true, 'installed packages under console/ are not inputs')
  const old = fs.statSync(path.join(root, 'src/main/index.ts')).mtime
  put('src/main/index.ts', 'export const x = 1\n')
  fs.utimesSync(path.join(root, 'src/main/index.ts'), old, old)
  t.equal((await current(root)).ok, false, 'a changed source, even with its old time')
  await run(process.execPath, [script, 'write', '--root', root])
  t.equal((await current(root)).ok, true)

  put('src/main/extra.ts', 'export {}\n')
  t.equal((await current(root)).ok, false, 'an added source')
  fs.rmSync(path.join(root, 'src/main/extra.ts'))
  t.equal((await current(root)).ok, true, 'back as it was')
  fs.renameSync(path.join(root, 'src/main/index.ts'), path.join(root, 'src/main/main.ts'))
  t.equal((await current(root)).ok, false, 'a renamed source')
  fs.renameSync(path.join(root, 'src/main/main.ts'), path.join(root, 'src/main/index.ts'))

  put('package-lock.json', '{"lockfileVersion":3}\n')
  t.equal((await current(root)).ok, false, 'other dependencies')
  await run(process.execPath, [script, 'write', '--root', root])
  fs.rmSync(path.join(root, 'dist/ui/portal/index.html'))
  t.match(await current(root), { ok: false, says: /dist\/ui\/portal\/index.html is missing/ }, 'a missing output')
})
