/**
 * A node's settings form, generated from its settings schema in the catalogue:
 * enums as selects, booleans as checkboxes, texts and numbers as inputs, objects and
 * lists as JSON (or one {{ }} expression). Each change is applied to the graph at once.
 */
import type { NodeType } from './workflow-model'

type Kind = { kind: 'select', options: string[] } | { kind: 'bool' } | { kind: 'text' } | { kind: 'number' } | { kind: 'json' }

function kindOf (s: any): Kind {
  const alts: any[] = s.anyOf ?? [s]
  const en = alts.find(a => Array.isArray(a.enum))
  if (en !== undefined) return { kind: 'select', options: en.enum }
  if (alts.some(a => a.type === 'boolean')) return { kind: 'bool' }
  if (alts.some(a => a.type === 'integer' || a.type === 'number')) return { kind: 'number' }
  if (alts.some(a => a.type === 'object' || a.type === 'array') || s.type === undefined) return { kind: 'json' }
  return { kind: 'text' }
}

const asText = (v: unknown) => v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2)

function parseValue (kind: Kind, text: string): unknown {
  if (text === '') return undefined
  if (kind.kind === 'number') return /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text
  if (kind.kind === 'json') { try { return JSON.parse(text) } catch { return text } }
  return text
}

export function SettingsForm ({ spec, settings, readOnly, onChange }: { spec: NodeType, settings: Record<string, unknown>, readOnly: boolean, onChange: (s: Record<string, unknown>) => void }) {
  const schema = spec.settings_schema as { properties?: Record<string, any>, required?: string[] }
  const props = schema.properties ?? {}
  const required = new Set(schema.required ?? [])
  const set = (name: string, value: unknown) => {
    const next = { ...settings }
    if (value === undefined) delete next[name]
    else next[name] = value
    onChange(next)
  }
  if (Object.keys(props).length === 0) return <p className='muted'>This node has no settings.</p>
  return (
    <div className='settings'>
      {Object.entries(props).map(([name, s]) => {
        const k = kindOf(s)
        const label = `${name}${required.has(name) ? ' *' : ''}`
        const value = settings[name]
        return (
          <label key={name} className='field'>
            <span>{label}</span>
            {k.kind === 'select' && (
              <select aria-label={name} disabled={readOnly} value={asText(value)} onChange={e => set(name, e.target.value === '' ? undefined : e.target.value)}>
                <option value=''>—</option>
                {k.options.map(o => <option key={o} value={o}>{o}</option>)}
              </select>
            )}
            {k.kind === 'bool' && <input type='checkbox' aria-label={name} disabled={readOnly} checked={value === true} onChange={e => set(name, e.target.checked)} />}
            {(k.kind === 'text' || k.kind === 'number') && <input aria-label={name} disabled={readOnly} value={asText(value)} onChange={e => set(name, parseValue(k, e.target.value))} />}
            {k.kind === 'json' && <JsonSetting name={name} value={value} readOnly={readOnly} onChange={v => set(name, v)} kind={k} />}
            {typeof s.description === 'string' && <small>{s.description}</small>}
          </label>
        )
      })}
    </div>
  )
}

/** A JSON setting keeps the text being typed; the value follows whenever the text parses (or is an expression). */
function JsonSetting ({ name, value, readOnly, onChange, kind }: { name: string, value: unknown, readOnly: boolean, onChange: (v: unknown) => void, kind: Kind }) {
  return (
    <textarea
      aria-label={name} className='code' rows={4} disabled={readOnly}
      defaultValue={asText(value)}
      onChange={e => onChange(parseValue(kind, e.target.value))}
    />
  )
}
