/** The frame around every page: navigation, who is signed in, the live indicator, the assistant panel. */
import { useContext, useState } from 'react'
import { NavLink, Outlet } from 'react-router'
import { StreamContext, useSession } from './session'
import { AssistantPanel } from './pages/assistant'

const NAV: Array<[string, string]> = [
  ['/collections', 'Collections'],
  ['/policies', 'Policies'],
  ['/clients', 'Clients'],
  ['/credentials', 'Credentials'],
  ['/triggers', 'Triggers'],
  ['/metrics', 'Metrics'],
  ['/request-logs', 'Request logs'],
  ['/audit', 'Audit log']
]

export function Layout () {
  const stream = useContext(StreamContext)
  const { session, signOut } = useSession()
  const [assistant, setAssistant] = useState(false)
  return (
    <div className='shell'>
      <nav className='sidebar' aria-label='Main'>
        <div className='brand'>Gatehouse</div>
        {NAV.map(([to, label]) => <NavLink key={to} to={to}>{label}</NavLink>)}
        <a href={`${location.protocol}//${location.hostname}:8080/portal/`} target='_blank' rel='noreferrer' className='muted'>Developer portal ↗</a>
      </nav>
      <div className='main'>
        <header className='topbar'>
          <span className={`live ${stream}`} title='Live updates from the event stream'>{stream === 'live' ? '● Live' : stream === 'connecting' ? '○ Connecting' : '○ Reconnecting'}</span>
          <span className='who'>{session.sub} <span className='pill'>{session.role ?? 'no role'}</span></span>
          <button type='button' className='ghost' onClick={() => setAssistant(a => !a)}>Assistant</button>
          <button type='button' onClick={signOut}>Sign out</button>
        </header>
        <main><Outlet /></main>
      </div>
      {assistant && <AssistantPanel onClose={() => setAssistant(false)} />}
    </div>
  )
}
