import t from 'tap'
import { walkEmitsTable } from './emits-table.js'

t.test('every row of the emits table over REST, seen on the event stream (embedded)', async t => { await walkEmitsTable(t, 'embedded') })
