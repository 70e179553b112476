/** The embedded store behind its worker thread: transactions, errors and closing keep the Store contract. */
import t from 'tap'
import { createEmbeddedStore } from '../../../src/main/store/embedded.js'
import { isDatabaseUnavailable, isUniqueViolation } from '../../../src/main/store/types.js'
import { createTempDir } from '../../helpers/db.js'

t.test('transactions commit or roll back as a whole, errors keep their SQLSTATE, a closed store says so', async t => {
  const store = await createEmbeddedStore(await createTempDir(t))
  let closed = false
  t.teardown(async () => { if (!closed) await store.close() })
  await store.exec('CREATE TABLE t (id text PRIMARY KEY, n integer NOT NULL, at timestamptz, raw bytea)')

  await store.tx(async q => {
    await q.query('INSERT INTO t (id, n) VALUES ($1, $2)', ['a', 1])
    await q.query('INSERT INTO t (id, n) VALUES ($1, $2)', ['b', 2])
  })
  await t.rejects(store.tx(async q => {
    await q.query('INSERT INTO t (id, n) VALUES ($1, $2)', ['c', 3])
    throw new Error('changed my mind')
  }), { message: 'changed my mind' }, 'the caller\'s error comes back as is')
  const dup = await store.tx(async q => { await q.query('INSERT INTO t (id, n) VALUES ($1, $2)', ['a', 9]) }).catch((err: unknown) => err)
  t.ok(isUniqueViolation(dup), 'a unique violation keeps its code (23505) across the thread')
  t.match(dup, { constraint: 't_pkey' })
  t.same((await store.query('SELECT id, n FROM t ORDER BY id')).rows, [{ id: 'a', n: 1 }, { id: 'b', n: 2 }], 'only the committed transaction is there')

  // Two transactions at once: the second waits for the first (one connection), neither sees a half.
  const order: string[] = []
  await Promise.all([
    store.tx(async q => { order.push('1 start'); await q.query('UPDATE t SET n = n + 10'); await new Promise(resolve => setTimeout(resolve, 50)); order.push('1 end') }),
    store.tx(async q => { order.push('2 start'); await q.query('UPDATE t SET n = n * 2'); order.push('2 end') })
  ])
  t.same(order, ['1 start', '1 end', '2 start', '2 end'], 'transactions run one after another')
  t.same((await store.query('SELECT n FROM t ORDER BY id')).rows.map(r => r.n), [22, 24])

  const at = new Date('2026-01-02T03:04:05.678Z')
  const r = await store.query('UPDATE t SET at = $1, raw = $2 WHERE id = $3 RETURNING at, raw', [at.toISOString(), Buffer.from([1, 2, 3]), 'a'])
  t.equal(r.rowCount, 1)
  t.same(new Date(r.rows[0].at).toISOString(), at.toISOString(), 'timestamps come back as dates')
  t.same([...r.rows[0].raw], [1, 2, 3], 'bytea comes back as bytes')

  await store.close()
  closed = true
  const after = await store.query('SELECT 1').catch((err: unknown) => err)
  t.ok(isDatabaseUnavailable(after), 'a closed store reports itself unavailable')
  await t.rejects(store.ping())
})

t.test('with EMBEDDED_STORE_OPTIMIZE=on the store answers as with the default', async t => {
  // Each store's thread compiles PostgreSQL's WebAssembly with its own setting: one after the other.
  for (const optimize of [true, false]) {
    const store = await createEmbeddedStore(await createTempDir(t), { optimize })
    try {
      await store.exec('CREATE TABLE items (id integer PRIMARY KEY, doc jsonb NOT NULL)')
      await store.tx(async q => {
        for (let i = 1; i <= 200; i++) await q.query('INSERT INTO items (id, doc) VALUES ($1, $2)', [i, { n: i, tag: i % 2 === 0 ? 'even' : 'odd' }])
      })
      const r = await store.query("SELECT doc->>'tag' AS tag, count(*)::int AS n, sum((doc->>'n')::int)::int AS total FROM items GROUP BY 1 ORDER BY 1")
      t.same(r.rows, [{ tag: 'even', n: 100, total: 10100 }, { tag: 'odd', n: 100, total: 10000 }], `optimize ${String(optimize)}`)
    } finally {
      await store.close()
    }
  }
})
