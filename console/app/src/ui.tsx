/** Small building blocks shared by the pages: dialogs, fields, banners, errors. */
import { useEffect, type ReactNode } from 'react'
import { ApiError } from './api'

export function Dialog ({ title, onClose, children, wide }: { title: string, onClose: () => void, children: ReactNode, wide?: boolean }) {
  useEffect(() => {
    const key = (e: KeyboardEvent) => { if (e.key === 'Escape') onClose() }
    window.addEventListener('keydown', key)
    return () => window.removeEventListener('keydown', key)
  }, [onClose])
  return (
    <div className='backdrop' onMouseDown={e => { if (e.target === e.currentTarget) onClose() }}>
      <div className={wide === true ? 'dialog wide' : 'dialog'} role='dialog' aria-modal='true' aria-label={title}>
        <header><h2>{title}</h2><button type='button' className='ghost' aria-label='Close' onClick={onClose}>×</button></header>
        {children}
      </div>
    </div>
  )
}

export function Field ({ label, children, hint }: { label: string, children: ReactNode, hint?: string }) {
  return <label className='field'><span>{label}</span>{children}{hint !== undefined && <small>{hint}</small>}</label>
}

export function Banner ({ kind = 'info', children }: { kind?: 'info' | 'warn' | 'error', children: ReactNode }) {
  return <div className={`banner ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>{children}</div>
}

/** An API error as the server phrased it, with each invalid field when it lists them. */
export function ErrorText ({ error }: { error: unknown }) {
  if (error == null) return null
  const details = error instanceof ApiError && Array.isArray(error.details) ? error.details as Array<{ field?: string, message?: string }> : []
  return (
    <Banner kind='error'>
      {error instanceof Error ? error.message : String(error)}
      {details.length > 0 && <ul>{details.map((d, i) => <li key={i}>{d.field !== undefined && <code>{d.field}</code>} {d.message}</li>)}</ul>}
    </Banner>
  )
}

export function Status ({ value }: { value: string }) {
  return <span className={`pill ${value}`}>{value}</span>
}

export function when (iso: string | null | undefined): string {
  return iso == null ? '' : new Date(iso).toLocaleString()
}

/** Reads a form's named inputs as strings. */
export function formValues (form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]))
}

/** Parses a JSON text field, naming the field when it is not JSON. */
export function parseJsonField (label: string, text: string, empty: unknown): unknown {
  if (text.trim() === '') return empty
  try { return JSON.parse(text) } catch { throw new Error(`${label} is not valid JSON.`) }
}
