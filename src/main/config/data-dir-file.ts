/**
 * Files a start creates once in DATA_DIR (the secrets key, the local issuer's key) and every later
 * start, or a second instance starting at the same moment, reads back.
 */
import { randomUUID } from 'node:crypto'
import { link, readFile, unlink, writeFile } from 'node:fs/promises'

/**
 * Creates `file` holding `content` unless it exists, and answers what it holds: `content`, or what
 * the first writer put there. The content is written to a temporary file beside it first and then
 * linked into place (a link fails when the name exists), so a start racing this one never reads a
 * file that is still empty or half written.
 */
export async function createOnce (file: string, content: string, mode: number): Promise<string> {
  const tmp = `${file}.${randomUUID()}.tmp`
  await writeFile(tmp, content, { mode, flag: 'wx' })
  try {
    await link(tmp, file)
    return content
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    return await readFile(file, 'utf8')
  } finally {
    await unlink(tmp).catch(() => {})
  }
}
