/**
 * The developer portal, served by the gateway at /portal/: the published APIs from
 * /portal/catalogue.json grouped by collection, each with its parameters and schemas,
 * a "try it" form that calls the gateway for real with the developer's profile
 * credentials (kept in sessionStorage: this tab only), and each collection's
 * OpenAPI document to download.
 */
import { StrictMode, useEffect, useState, type FormEvent } from 'react'
import { createRoot } from 'react-dom/client'
import '../../shared/styles.css'
import { JsonView } from '../../shared/json-view'
import { readSseFrames } from '../../shared/sse'

interface Parameter { name: string, location: 'path' | 'query', type: string, required: boolean, default?: unknown, description?: string }
interface Api { id: string, name: string, description: string, methods: string[], path: string, parameters: Parameter[], request_schema: unknown, response_schema: unknown, streaming: boolean }
interface Collection { id: string, name: string, description: string, base_path: string, auth_required: boolean, openapi_url: string, proxies: Api[] }
interface Creds { client_id: string, profile_id: string, token: string }

const CREDS = 'gatehouse.portal.credentials'
const loadCreds = (): Creds => ({ client_id: '', profile_id: '', token: '', ...JSON.parse(sessionStorage.getItem(CREDS) ?? '{}') })

function Portal () {
  const [collections, setCollections] = useState<Collection[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [creds, setCreds] = useState<Creds>(loadCreds)
  useEffect(() => {
    fetch('/portal/catalogue.json').then(async r => await r.json()).then(c => setCollections(c.collections), (e: Error) => setError(e.message))
  }, [])
  const saveCreds = (c: Creds) => { setCreds(c); sessionStorage.setItem(CREDS, JSON.stringify(c)) }
  return (
    <div className='portal'>
      <header className='portal-head'>
        <h1>Developer portal</h1>
        <p className='muted'>The APIs published on this gateway.</p>
      </header>
      <CredentialsForm creds={creds} onSave={saveCreds} />
      <PortalAssistant creds={creds} />
      {error !== null && <p className='banner error'>{error}</p>}
      {collections?.length === 0 && <p className='muted'>No APIs are published yet.</p>}
      {collections?.map(c => (
        <section key={c.id} className='card' aria-label={c.name}>
          <div className='toolbar'>
            <h2>{c.name}</h2><code>{c.base_path}</code>
            {c.auth_required && <span className='pill'>credentials required</span>}
            <span className='grow' />
            <a href={c.openapi_url} download>OpenAPI document</a>
          </div>
          {c.description !== '' && <p>{c.description}</p>}
          {c.proxies.map(p => <ApiEntry key={p.id} collection={c} api={p} creds={creds} />)}
        </section>
      ))}
    </div>
  )
}

function CredentialsForm ({ creds, onSave }: { creds: Creds, onSave: (c: Creds) => void }) {
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    onSave({ client_id: String(f.get('client_id')), profile_id: String(f.get('profile_id')), token: String(f.get('token')) })
  }
  return (
    <form className='card creds' onSubmit={submit} aria-label='Your credentials'>
      <strong>Your credentials</strong>
      <input name='client_id' placeholder='Client id' aria-label='Client id' defaultValue={creds.client_id} />
      <input name='profile_id' placeholder='Profile id' aria-label='Profile id' defaultValue={creds.profile_id} />
      <input name='token' type='password' placeholder='API key or token' aria-label='API key or token' defaultValue={creds.token} />
      <button type='submit'>Use</button>
      <small className='muted'>Kept in this tab only; sent as Authorization, X-Client-ID and X-Profile-ID.</small>
    </form>
  )
}

function ApiEntry ({ collection, api, creds }: { collection: Collection, api: Api, creds: Creds }) {
  const [open, setOpen] = useState(false)
  return (
    <article className='api' aria-label={api.name}>
      <button type='button' className='api-head' onClick={() => setOpen(o => !o)} aria-expanded={open}>
        {api.methods.map(m => <span key={m} className={`method ${m}`}>{m}</span>)}
        <code>{collection.base_path}{api.path}</code>
        <strong>{api.name}</strong>
        <span className='muted'>{api.description}</span>
      </button>
      {open && (
        <div className='api-body'>
          {api.description !== '' && <p>{api.description}</p>}
          {api.parameters.length > 0 && (
            <table>
              <thead><tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Description</th></tr></thead>
              <tbody>{api.parameters.map(p => <tr key={p.name + p.location}><td><code>{p.name}</code></td><td>{p.location}</td><td>{p.type}</td><td>{p.required ? 'yes' : 'no'}</td><td>{p.description}</td></tr>)}</tbody>
            </table>
          )}
          {api.request_schema != null && <><h4>Request body</h4><JsonView value={api.request_schema} /></>}
          {api.response_schema != null && <><h4>Response</h4><JsonView value={api.response_schema} /></>}
          <TryIt collection={collection} api={api} creds={creds} />
        </div>
      )}
    </article>
  )
}

interface Answer { status: number, headers: Array<[string, string]>, body: string, ms: number }

/** Calls the gateway for real: path parameters substituted, query from the form, the developer's credentials. */
function TryIt ({ collection, api, creds }: { collection: Collection, api: Api, creds: Creds }) {
  const pathParams = [...api.path.matchAll(/\{([^}]+)\}/g)].map(m => m[1])
  const declared = new Map(api.parameters.map(p => [`${p.location}:${p.name}`, p]))
  const queryParams = api.parameters.filter(p => p.location === 'query')
  const [answer, setAnswer] = useState<Answer | null>(null)
  const [error, setError] = useState<string | null>(null)
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setError(null)
    const f = new FormData(e.currentTarget)
    const method = String(f.get('method'))
    let path = collection.base_path + api.path
    for (const name of pathParams) path = path.replace(`{${name}}`, encodeURIComponent(String(f.get(`path:${name}`))))
    if (path.endsWith('/*')) path = path.slice(0, -2) + String(f.get('wildcard') ?? '')
    const q = new URLSearchParams(queryParams.map(p => [p.name, String(f.get(`query:${p.name}`))] as [string, string]).filter(([, v]) => v !== ''))
    const headers: Record<string, string> = {}
    if (creds.token !== '') headers.authorization = `Bearer ${creds.token}`
    if (creds.client_id !== '') headers['x-client-id'] = creds.client_id
    if (creds.profile_id !== '') headers['x-profile-id'] = creds.profile_id
    const body = String(f.get('body') ?? '')
    if (body !== '' && method !== 'GET' && method !== 'DELETE') headers['content-type'] = 'application/json'
    const started = performance.now()
    try {
      const res = await fetch(path + (q.size > 0 ? `?${q.toString()}` : ''), { method, headers, body: method === 'GET' || method === 'DELETE' || body === '' ? undefined : body })
      const text = await res.text()
      let shown = text
      try { shown = JSON.stringify(JSON.parse(text), null, 2) } catch {}
      setAnswer({ status: res.status, headers: [...res.headers.entries()], body: shown, ms: Math.round(performance.now() - started) })
    } catch (err) { setError((err as Error).message) }
  }
  const fallback = (p: Parameter | undefined) => p?.default === undefined ? '' : String(p.default)
  return (
    <form className='try' onSubmit={e => { void submit(e) }} aria-label={`Try ${api.name}`}>
      <h4>Try it</h4>
      <div className='row'>
        <select name='method' aria-label='Method' defaultValue={api.methods[0]}>{api.methods.map(m => <option key={m}>{m}</option>)}</select>
        {pathParams.map(name => <label key={name} className='field'><span>{name} (path)</span><input name={`path:${name}`} aria-label={name} required defaultValue={fallback(declared.get(`path:${name}`))} /></label>)}
        {api.path.endsWith('/*') && <label className='field'><span>rest of the path</span><input name='wildcard' aria-label='rest of the path' defaultValue='/' /></label>}
        {queryParams.map(p => <label key={p.name} className='field'><span>{p.name} (query{p.required ? ', required' : ''})</span><input name={`query:${p.name}`} aria-label={p.name} required={p.required} defaultValue={fallback(p)} /></label>)}
      </div>
      {api.methods.some(m => m === 'POST' || m === 'PUT' || m === 'PATCH') && <label className='field'><span>Body (JSON)</span><textarea name='body' rows={4} className='code' /></label>}
      <button type='submit'>Send</button>
      {error !== null && <p className='banner error'>{error}</p>}
      {answer !== null && (
        <div className='answer' aria-label='Response'>
          <p><span className={`pill s${String(answer.status)[0]}xx`}>{answer.status}</span> <span className='muted'>{answer.ms} ms</span></p>
          <details><summary>Headers</summary><JsonView value={Object.fromEntries(answer.headers)} /></details>
          <JsonView value={answer.body} label='Response body' />
        </div>
      )}
    </form>
  )
}

interface Waiting { action_id: string, tool: string, arguments: unknown }

/**
 * The portal assistant (POST /portal/api/assistant/chat): finds and calls the APIs your profile may
 * use through the gateway MCP, with your credentials; a call other than GET waits for Approve.
 */
function PortalAssistant ({ creds }: { creds: Creds }) {
  const [lines, setLines] = useState<Array<{ kind: string, text: string }>>([])
  const [waiting, setWaiting] = useState<Waiting | null>(null)
  const [busy, setBusy] = useState(false)
  const [text, setText] = useState('')
  const send = async (body: unknown, echo?: string) => {
    const next = [...lines, ...(echo !== undefined ? [{ kind: 'user', text: echo }] : [])]
    const add = (l: { kind: string, text: string }) => { next.push(l); setLines([...next]) }
    setLines(next)
    setWaiting(null)
    setBusy(true)
    try {
      const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${creds.token}`, 'x-client-id': creds.client_id, 'x-profile-id': creds.profile_id }
      const res = await fetch('/portal/api/assistant/chat', { method: 'POST', headers, body: JSON.stringify(body) })
      if (!res.ok) {
        const e = await res.json().catch(() => ({})) as { error?: { message?: string } }
        add({ kind: 'error', text: e.error?.message ?? `The gateway answered ${res.status}.` })
        return
      }
      await readSseFrames(res, (event, data) => {
        if (event === 'message') add({ kind: 'assistant', text: data.content })
        else if (event === 'tool_result') add({ kind: data.is_error === true ? 'error' : 'tool', text: `${data.is_error === true ? '✗' : '✓'} ${data.tool as string}` })
        else if (event === 'confirmation_required') setWaiting(data)
        else if (event === 'error') add({ kind: 'error', text: data.error?.message ?? 'The assistant stopped.' })
      })
    } catch (err) { add({ kind: 'error', text: (err as Error).message }) } finally { setBusy(false) }
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const m = text.trim()
    if (m === '' || busy) return
    setText('')
    void send({ message: m }, m)
  }
  return (
    <section className='card assistant-inline' aria-label='Assistant'>
      <strong>Assistant</strong>
      <p className='muted'>Ask which APIs you can use, or have it call one with your credentials.</p>
      <ol className='chat' aria-label='Conversation'>{lines.map((l, i) => <li key={i} className={`chat-${l.kind}`}>{l.text}</li>)}</ol>
      {waiting !== null && (
        <div className='confirm' role='alertdialog' aria-label='Confirm call'>
          <p><strong>{waiting.tool}</strong></p>
          <pre>{JSON.stringify(waiting.arguments, null, 2)}</pre>
          <button type='button' disabled={busy} onClick={() => { void send({ confirm: { action_id: waiting.action_id, approve: true } }) }}>Approve</button>{' '}
          <button type='button' className='ghost' disabled={busy} onClick={() => { void send({ confirm: { action_id: waiting.action_id, approve: false } }) }}>Decline</button>
        </div>
      )}
      <form onSubmit={submit} className='row'>
        <input aria-label='Message to the assistant' value={text} onChange={e => setText(e.target.value)} placeholder='e.g. What can I call here?' />
        <button type='submit' disabled={busy || text.trim() === ''}>Ask</button>
      </form>
    </section>
  )
}

createRoot(document.getElementById('root')!).render(<StrictMode><Portal /></StrictMode>)
