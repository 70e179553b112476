import t, { type Test } from 'tap'
import { AppError } from '../../../src/common/errors.js'
import { multipartBoundary, parseMultipart, requirePart } from '../../../src/main/collections-io/multipart.js'
import { exportCollections } from '../../../src/main/collections-io/export-file.js'
import { parseImportFile } from '../../../src/main/collections-io/import-file.js'
import { collectionRecord, proxyRecords } from './records.js'

/** A body as a real client encodes it (undici's FormData, the same encoder as fetch uploads). */
async function encode (form: FormData): Promise<{ body: Buffer, contentType: string }> {
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form })
  return { body: Buffer.from(await req.arrayBuffer()), contentType: req.headers.get('content-type') as string }
}

function rejects (t: Test, fn: () => unknown, status: number, message: RegExp): void {
  try {
    fn()
    t.fail('expected an error')
  } catch (err) {
    t.ok(err instanceof AppError)
    t.equal((err as AppError).status, status)
    t.match((err as AppError).message, message)
  }
}

const raw = (s: string) => Buffer.from(s.replace(/\n/g, '\r\n'))

t.test('a file uploaded by a fetch client is found in the "file" part and imports', async t => {
  const file = exportCollections([{ collection: collectionRecord({ name: 'Naïve API' }), proxies: proxyRecords([{ name: 'a', path: '/a' }]) }])
  const form = new FormData()
  form.append('note', 'hello')
  form.append('file', new Blob([JSON.stringify(file)], { type: 'application/json' }), 'naïve export.json')
  const { body, contentType } = await encode(form)
  const parts = parseMultipart(body, contentType)
  t.same(parts.map(p => [p.name, p.filename, p.contentType]), [['note', undefined, undefined], ['file', 'naïve export.json', 'application/json']])
  t.equal(parts[0]!.data.toString(), 'hello')
  const imported = parseImportFile(requirePart(parts, 'file').data)
  t.ok(imported.ok)
  if (imported.ok) t.same(imported.file, file)
})

t.test('binary data, preamble, epilogue, empty parts and RFC 5987 file names', async t => {
  const bytes = Buffer.from([0, 13, 10, 45, 45, 255, 13, 10])
  const body = Buffer.concat([
    raw('preamble text\n--XyZ\nContent-Disposition: form-data; name="bin"; filename="a.bin"\nContent-Type: application/octet-stream\n\n'),
    bytes,
    raw('\n--XyZ  \ncontent-disposition: form-data; name="empty"\n\n\n--XyZ\n'),
    raw("Content-Disposition: form-data; name=\"f\"; filename=\"fallback.json\"; filename*=UTF-8''r%C3%A9sum%C3%A9.json\n\n{}\n--XyZ--\nepilogue")
  ])
  const parts = parseMultipart(body, 'multipart/form-data; charset=utf-8; boundary="XyZ"')
  t.same(parts.map(p => p.name), ['bin', 'empty', 'f'])
  t.same(parts[0]!.data, bytes, 'bytes that look like line breaks and dashes are kept')
  t.equal(parts[1]!.data.length, 0)
  t.equal(parts[2]!.filename, 'résumé.json')
  t.equal(parts[2]!.data.toString(), '{}')
})

t.test('wrong content types and malformed bodies answer clear errors', async t => {
  rejects(t, () => parseMultipart(Buffer.from('{}'), 'application/json'), 415, /multipart\/form-data/)
  rejects(t, () => multipartBoundary('multipart/form-data'), 400, /no valid boundary/)
  rejects(t, () => multipartBoundary(`multipart/form-data; boundary=${'b'.repeat(71)}`), 400, /no valid boundary/)
  rejects(t, () => parseMultipart(raw('no boundary here'), 'multipart/form-data; boundary=B'), 400, /no opening boundary/)
  rejects(t, () => parseMultipart(raw('--B\nContent-Disposition: form-data; name="a"\n\nabc'), 'multipart/form-data; boundary=B'),
    400, /ends before the closing boundary/)
  rejects(t, () => parseMultipart(raw('--B\nContent-Disposition: form-data; name="a"'), 'multipart/form-data; boundary=B'), 400, /no end of headers/)
  rejects(t, () => parseMultipart(raw('--B\nContent-Type: text/plain\n\nx\n--B--'), 'multipart/form-data; boundary=B'), 400, /part 1 has no "Content-Disposition/)
  rejects(t, () => parseMultipart(raw('--B\nContent-Disposition: form-data\n\nx\n--B--'), 'multipart/form-data; boundary=B'), 400, /part 1 has no name/)
  rejects(t, () => parseMultipart(raw('--Bjunk\n\nx\n--B--'), 'multipart/form-data; boundary=B'), 400, /not followed by a line break/)
  rejects(t, () => requirePart([], 'file'), 400, /no part named "file"/)
})

t.test('part count and sizes are bounded', async t => {
  const part = (name: string, data: string) => `--B\nContent-Disposition: form-data; name="${name}"\n\n${data}\n`
  const three = raw(part('a', '1') + part('b', '2') + part('c', '3') + '--B--')
  t.equal(parseMultipart(three, 'multipart/form-data; boundary=B', { maxParts: 3 }).length, 3)
  rejects(t, () => parseMultipart(three, 'multipart/form-data; boundary=B', { maxParts: 2 }), 413, /more than 2 parts/)
  rejects(t, () => parseMultipart(raw(part('a', 'x'.repeat(11)) + '--B--'), 'multipart/form-data; boundary=B', { maxPartBytes: 10 }),
    413, /larger than 10 bytes/)
  rejects(t, () => parseMultipart(raw(part('a'.repeat(100), 'x') + '--B--'), 'multipart/form-data; boundary=B', { maxHeaderBytes: 64 }),
    413, /headers are larger than 64 bytes/)
})
