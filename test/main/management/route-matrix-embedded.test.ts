import t from 'tap'
import { checkEveryRoute } from './route-matrix.js'

t.test('every route: 401, 403, 404, 412 (embedded)', async t => { await checkEveryRoute(t, 'embedded') })
