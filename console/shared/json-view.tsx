/** Pretty-printed JSON in a scrollable block: for outputs, schemas and answers. */
export function JsonView ({ value, label }: { value: unknown, label?: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2)
  return <pre className='json' aria-label={label}>{text ?? 'null'}</pre>
}
