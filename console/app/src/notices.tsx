/** Short notices at the bottom of the screen ("Deleted elsewhere", "Duplicated as …"). */
import { createContext, useCallback, useContext, useState, type ReactNode } from 'react'

const NoticeContext = createContext<(text: ReactNode) => void>(() => {})

export function NoticeProvider ({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<Array<{ id: number, text: ReactNode }>>([])
  const notify = useCallback((text: ReactNode) => {
    const id = Date.now() + Math.random()
    setItems(list => [...list, { id, text }])
    setTimeout(() => setItems(list => list.filter(i => i.id !== id)), 8000)
  }, [])
  return (
    <NoticeContext.Provider value={notify}>
      {children}
      <div className='notices' aria-live='polite'>{items.map(i => <div key={i.id} className='notice' role='status'>{i.text}</div>)}</div>
    </NoticeContext.Provider>
  )
}

export const useNotify = () => useContext(NoticeContext)
