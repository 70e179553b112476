/** The signed-in session, shared through context: who, which role, how to sign out. */
import { createContext, useContext } from 'react'
import { atLeast, type Role, type Session } from './auth'
import type { StreamState } from './events'

export const StreamContext = createContext<StreamState>('connecting')

export const SessionContext = createContext<{ session: Session, signOut: () => void } | null>(null)

export function useSession () {
  const s = useContext(SessionContext)
  if (s === null) throw new Error('useSession outside the signed-in app')
  return s
}

/** Whether the UI shows controls for an action that needs `role` (the API still decides). */
export function useCan (role: Role): boolean { return atLeast(useSession().session, role) }
