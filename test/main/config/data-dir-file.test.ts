/** Key files in DATA_DIR: instances starting at the same moment agree on one, and none reads it half written. */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createOnce } from '../../../src/main/config/data-dir-file.js'
import { loadSecretsKey } from '../../../src/main/credentials/secrets.js'
import { openLocalIssuer } from '../../../src/main/auth/local-issuer.js'
import { createTempDir } from '../../helpers/db.js'

t.test('concurrent creators all answer the one content that was written', async t => {
  const dir = await createTempDir(t)
  for (let round = 0; round < 20; round++) {
    const file = path.join(dir, `key-${round}`)
    const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => await createOnce(file, `content of writer ${i} `.repeat(2000), 0o600)))
    const stored = fs.readFileSync(file, 'utf8')
    t.ok(answers.every(a => a === stored), `round ${round}: every writer answers what the file holds, whole`)
    t.equal(fs.statSync(file).mode & 0o777, 0o600)
  }
  t.same(fs.readdirSync(dir).filter(f => f.endsWith('.tmp')), [], 'no temporary file left behind')
  t.equal(await createOnce(path.join(dir, 'key-0'), 'late', 0o600), fs.readFileSync(path.join(dir, 'key-0'), 'utf8'), 'a later start reads the existing file')
})

t.test('starts sharing a fresh DATA_DIR get the same secrets key and the same signing key', async t => {
  for (let round = 0; round < 30; round++) {
    const dataDir = path.join(await createTempDir(t), 'data')
    const keys = await Promise.all(Array.from({ length: 16 }, async () => await loadSecretsKey({ secretsKey: '', dataDir })))
    t.ok(keys.every(k => k.equals(keys[0]!)), `round ${round}: one secrets key`)
    const issuers = await Promise.all(Array.from({ length: 16 }, async () => await openLocalIssuer(dataDir)))
    t.ok(issuers.every(i => JSON.stringify(i.publicJwk) === JSON.stringify(issuers[0]!.publicJwk)), `round ${round}: one signing key`)
  }
})
