/**
 * xml_node: `mode` xml_to_json | json_to_xml, `source` (expression), `unwrap_soap`.
 *   xml_to_json: text ≤ 1 MiB, validated first (fast-xml-parser accepts malformed
 *     XML otherwise); attributes become `@_name`, text beside them `#text`, values
 *     stay text; DOCTYPE entities are bounded and external ones refused. With
 *     unwrap_soap the output is the content of Envelope/Body, prefixes removed.
 *   json_to_xml: an object (or JSON text) becomes XML text; element names are
 *     checked so data cannot inject markup. Output: `{ output }`.
 * Parsing costs about 1 µs per byte, so the size bound is also a time bound.
 * The parser is loaded on the node's first run: a worker (or the main thread,
 * which reads the description) that never meets an XML node never loads it.
 */
import { NodeError } from '../engine/types.js'
import { anyValue, bool, plain } from './describe.js'
import type { NodeType } from './node-type.js'

type Xml = typeof import('fast-xml-parser')

export const MAX_XML_BYTES = 1024 * 1024

const parserOptions = (unwrap: boolean) => ({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  htmlEntities: false,
  removeNSPrefix: unwrap,
  processEntities: { enabled: true, maxEntityCount: 50, maxEntitySize: 10_000, maxTotalExpansions: 1000, maxExpandedLength: 100_000 }
})

const NAME = /^[A-Za-z_][A-Za-z0-9._-]*(:[A-Za-z_][A-Za-z0-9._-]*)?$/

export const xmlNode: NodeType = {
  description: plain('xml_node', 'data', 'Converts XML to JSON (optionally unwrapping a SOAP body) or JSON to XML.', {
    mode: { type: 'string', enum: ['xml_to_json', 'json_to_xml'], description: '"xml_to_json" (default) or "json_to_xml"' },
    source: anyValue('a {{ }} expression giving the XML text or the object to convert'),
    unwrap_soap: bool
  }, ['source'], '{output: <converted value>}', 'One input, one output. mode defaults to "xml_to_json".'),
  run: async ctx => {
    const xml = await import('fast-xml-parser')
    const name = ctx.node.name
    const mode = ctx.settings.mode ?? 'xml_to_json'
    const source = ctx.settings.source
    if (mode === 'xml_to_json') return { output: { output: xmlToJson(xml, name, source, ctx.settings.unwrap_soap === true) } }
    if (mode === 'json_to_xml') return { output: { output: jsonToXml(xml, name, source) } }
    throw new NodeError(`XML node '${name}': mode must be xml_to_json or json_to_xml.`)
  }
}

function xmlToJson ({ XMLParser, XMLValidator }: Xml, name: string, source: unknown, unwrap: boolean): unknown {
  if (typeof source !== 'string') throw new NodeError(`XML node '${name}': source must be XML text, such as {{fetch.response.body}}.`)
  if (Buffer.byteLength(source) > MAX_XML_BYTES) throw new NodeError(`XML node '${name}': the XML is larger than ${MAX_XML_BYTES} bytes.`)
  const valid = XMLValidator.validate(source)
  if (valid !== true) throw new NodeError(`XML node '${name}': the XML is malformed (line ${valid.err.line}, column ${valid.err.col}): ${valid.err.msg}`)
  let doc: Record<string, unknown>
  try {
    doc = new XMLParser(parserOptions(unwrap)).parse(source) as Record<string, unknown>
  } catch (err) {
    throw new NodeError(`XML node '${name}': the XML cannot be read: ${(err as Error).message}`)
  }
  if (!unwrap) return doc
  const envelope = doc.Envelope as Record<string, unknown> | undefined
  const body = envelope !== null && typeof envelope === 'object' ? envelope.Body : undefined
  if (body === undefined) throw new NodeError(`XML node '${name}': unwrap_soap is on, but the XML is not a SOAP Envelope with a Body.`)
  if (body === null || typeof body !== 'object') return body
  return Object.fromEntries(Object.entries(body).filter(([k]) => !k.startsWith('@_')))
}

function jsonToXml ({ XMLBuilder }: Xml, name: string, source: unknown): string {
  let value = source
  if (typeof value === 'string') {
    try { value = JSON.parse(value) } catch { throw new NodeError(`XML node '${name}': source must be an object or JSON text.`) }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new NodeError(`XML node '${name}': source must be an object whose keys are element names, such as {"order": {"@_id": "7", "item": ["a", "b"]}}.`)
  checkNames(name, value, 0)
  const xml = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', suppressBooleanAttributes: false }).build(value) as string
  if (Buffer.byteLength(xml) > MAX_XML_BYTES) throw new NodeError(`XML node '${name}': the XML would be larger than ${MAX_XML_BYTES} bytes.`)
  return xml
}

function checkNames (name: string, value: unknown, depth: number): void {
  if (depth > 100) throw new NodeError(`XML node '${name}': the object is nested more than 100 levels deep.`)
  if (Array.isArray(value)) { for (const v of value) checkNames(name, v, depth + 1); return }
  if (value === null || typeof value !== 'object') return
  for (const [k, v] of Object.entries(value)) {
    const bare = k.startsWith('@_') ? k.slice(2) : k
    if (k !== '#text' && !NAME.test(bare)) throw new NodeError(`XML node '${name}': '${k}' cannot be an XML element or attribute name.`)
    checkNames(name, v, depth + 1)
  }
}
