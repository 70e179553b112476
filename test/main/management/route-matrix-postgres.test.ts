import t from 'tap'
import { checkEveryRoute } from './route-matrix.js'

t.test('every route: 401, 403, 404, 412 (postgres)', async t => { await checkEveryRoute(t, 'postgres') })
