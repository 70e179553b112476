/**
 * What an open edit dialog shows: the record as it was when opened. A remote update
 * or status change raises a Reload banner (the form keeps the user's edits until they
 * choose); a remote delete closes the dialog with a notice.
 */
import { useEffect, useState } from 'react'
import { get } from './api'
import { useRemoteRecord, type ChangeEvent } from './events'
import { useNotify } from './notices'
import { Banner } from './ui'

export function useEditSnapshot<T extends { id: string, name?: string }> (kind: string, idField: keyof ChangeEvent, record: T | undefined, path: string, onClose: () => void) {
  const [shown, setShown] = useState(record)
  const remote = useRemoteRecord(kind, idField, record?.id ?? null)
  const notify = useNotify()
  useEffect(() => {
    if (!remote.deleted) return
    notify(`${record?.name ?? 'This record'} was deleted elsewhere.`)
    onClose()
  }, [remote.deleted])
  const reload = async () => { setShown(await get<T>(path)); remote.clear() }
  const banner = remote.changed && (
    <Banner kind='warn'>This {kind} was changed elsewhere. <button type='button' onClick={() => { void reload() }}>Reload</button></Banner>
  )
  return { shown, banner }
}
