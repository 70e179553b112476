/**
 * The start-up check of the Node.js release and the uWebSockets.js binary: the supported LTS
 * releases pass, another release is named with the supported ones, and a binary the host's C
 * library cannot load (the Node 22 and 24 builds need glibc 2.38) is explained in one line, from
 * the real loader error of the installed package.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import t from 'tap'
import { checkRuntime, diagnoseUwsLoad, runtimeFacts, unsupportedNode } from '../../src/main/runtime-check.js'

const require = createRequire(import.meta.url)
const uwsDir = path.dirname(require.resolve('uWebSockets.js'))

t.test('this Node.js and host start', async t => {
  t.equal(checkRuntime(), null)
})

t.test('a Node.js release without a supported binary is refused by name', async t => {
  const line = unsupportedNode({ node: '21.7.3', abi: '120', glibc: '2.36' })
  t.match(line, /Node\.js LTS releases 20, 22, 24; this is Node\.js 21\.7\.3 \(module ABI 120\)/)
  t.equal(unsupportedNode({ node: '22.12.0', abi: '127', glibc: '2.38' }), null)
  t.equal(unsupportedNode({ node: '24.1.0', abi: '137', glibc: '2.41' }), null)
})

t.test('the Node 22 binary on this host: the loader error becomes one line that says what to do', async t => {
  const facts = runtimeFacts()
  const binary = path.join(uwsDir, `uws_${process.platform}_${process.arch}_127.node`)
  let err: unknown = null
  try { require(binary) } catch (e) { err = e }
  t.ok(err, 'a Node 22 binary does not load into this Node.js 20 process')
  const line = diagnoseUwsLoad(err, { ...facts, abi: '127', node: '22.12.0' })
  t.notMatch(line, /\n/, 'one line')
  const glibcOld = facts.glibc !== null && Number(facts.glibc.split('.')[1]) < 38 && facts.glibc.startsWith('2.')
  if (glibcOld) {
    t.match(line, /needs glibc 2\.38/, 'names the glibc the binary needs')
    t.match(line, new RegExp(`this host has glibc ${facts.glibc!.replace(/\./g, '\\.')}`), 'and the host\'s')
    t.match(line, /Use Node\.js 20 here, or a host with glibc 2\.38 or newer/, 'and what to do')
  } else {
    t.match(line, /cannot load uWebSockets\.js on Node\.js 22\.12\.0/, 'on a newer host the loader\'s own reason is given')
  }
})

t.test('a missing binary says to install and which releases work', async t => {
  let err: unknown = null
  try { require(path.join(uwsDir, 'uws_linux_x64_999.node')) } catch (e) { err = e }
  t.match(diagnoseUwsLoad(err, { node: '20.1.0', abi: '115', glibc: '2.36' }), /cannot find the uWebSockets\.js binary .* run npm install, and use Node\.js 20, 22, 24/)
})

t.test('a uWS refusal says that GATEWAY_SERVER=node works there; node mode needs no binary', async t => {
  const broken = () => { throw new Error("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws_linux_x64_137.node)") }
  const line = checkRuntime('uws', broken, { node: '24.1.0', abi: '137', glibc: '2.36' })
  t.notMatch(line, /\n/, 'one line')
  t.match(line, /needs glibc 2\.38.* GATEWAY_SERVER=node \(node:http and node:http2, no native binary\) runs on this host\./)
  t.equal(checkRuntime('node', broken, { node: '24.1.0', abi: '137', glibc: '2.36' }), null, 'node mode never loads the binary')
  t.equal(checkRuntime('node', broken, { node: '22.12.0', abi: '127', glibc: '2.36' }), null)
  t.match(checkRuntime('node', broken, { node: '18.20.0', abi: '108', glibc: '2.36' }), /LTS releases 20, 22, 24; this is Node\.js 18\.20\.0/)
})
