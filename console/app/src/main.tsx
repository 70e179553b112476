/** Boot: sign-in (fragment token or OIDC code + PKCE), then the router under the live event stream. */
import { StrictMode, useEffect, useMemo, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { createBrowserRouter, Navigate, RouterProvider } from 'react-router'
import '../../shared/styles.css'
import { finishOidcSignIn, readSession, signOut as dropToken, startOidcSignIn, takeFragmentToken, type AuthConfig, type Session } from './auth'
import { setApiToken } from './api'
import { useEventStream } from './events'
import { SessionContext, StreamContext } from './session'
import { NoticeProvider } from './notices'
import { Layout } from './layout'
import { CollectionsPage } from './pages/collections'
import { CollectionPage } from './pages/collection'
import { WorkflowPage } from './pages/workflow'
import { TriggersPage } from './pages/triggers'
import { ClientPage, ClientsPage, CredentialsPage, PoliciesPage } from './pages/access'
import { AuditPage, MetricsPage, RequestLogsPage } from './pages/observe'

takeFragmentToken()

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 5_000 } } })

type Phase = { kind: 'loading' } | { kind: 'signed-out', reason?: string } | { kind: 'in', session: Session }

function App () {
  const [config, setConfig] = useState<AuthConfig | null>(null)
  const [phase, setPhase] = useState<Phase>({ kind: 'loading' })
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    (async () => {
      const res = await fetch('/api/v1/auth/config')
      const cfg = await res.json() as AuthConfig
      setConfig(cfg)
      if (!cfg.local_issuer) {
        const back = await finishOidcSignIn(cfg)
        if (back !== null) history.replaceState(null, '', back)
      }
      const s = readSession(cfg.roles_claim)
      setPhase(s === null ? { kind: 'signed-out' } : s.expiresAt !== null && s.expiresAt <= Date.now() ? expired() : { kind: 'in', session: s })
    })().catch((err: Error) => { setError(err.message); setPhase({ kind: 'signed-out' }) })
  }, [])

  // A clear screen when the token expires, at its exp or on the first 401; a token refused for
  // another reason (signed with another DATA_DIR's key, say) shows the API's own explanation.
  const session = phase.kind === 'in' ? phase.session : null
  // Set while rendering, not in an effect: the pages' first requests start before this component's effects run.
  setApiToken(session?.token ?? null, reason => setPhase(session?.expiresAt != null && session.expiresAt <= Date.now() ? expired() : refused(reason)))
  useEffect(() => {
    if (session === null || session.expiresAt === null) return
    const timer = setTimeout(() => setPhase(expired()), Math.min(2 ** 31 - 1, session.expiresAt - Date.now()))
    return () => clearTimeout(timer)
  }, [session])

  const stream = useEventStream(session?.token ?? null, queryClient)
  const router = useMemo(() => createBrowserRouter([{
    path: '/',
    element: <Layout />,
    children: [
      { index: true, element: <Navigate to='/collections' replace /> },
      { path: 'collections', element: <CollectionsPage /> },
      { path: 'collections/:id', element: <CollectionPage /> },
      { path: 'proxies/:id/workflow', element: <WorkflowPage /> },
      { path: 'policies', element: <PoliciesPage /> },
      { path: 'clients', element: <ClientsPage /> },
      { path: 'clients/:id', element: <ClientPage /> },
      { path: 'credentials', element: <CredentialsPage /> },
      { path: 'triggers', element: <TriggersPage /> },
      { path: 'metrics', element: <MetricsPage /> },
      { path: 'request-logs', element: <RequestLogsPage /> },
      { path: 'audit', element: <AuditPage /> },
      { path: '*', element: <p>This page does not exist. <a href='/collections'>Collections</a></p> }
    ]
  }]), [])

  if (phase.kind === 'loading') return <div className='center'>Loading…</div>
  if (phase.kind === 'signed-out') return <SignIn config={config} reason={phase.reason} error={error} onError={setError} />
  const signOut = () => { dropToken(); queryClient.clear(); setPhase({ kind: 'signed-out', reason: 'You signed out.' }) }
  return (
    <SessionContext.Provider value={{ session: phase.session, signOut }}>
      {config?.config_file === true && (
        <div role='status' style={{ padding: '6px 12px', background: '#fff4ce', borderBottom: '1px solid #e0c66b', fontSize: 14 }}>
          Read-only: this gateway's configuration comes from its CONFIG_FILE. Changes made here are refused; edit the file and reload the service (SIGHUP).
        </div>
      )}
      <StreamContext.Provider value={stream}><RouterProvider router={router} /></StreamContext.Provider>
    </SessionContext.Provider>
  )
}

function expired (): Phase {
  dropToken()
  queryClient.clear()
  return { kind: 'signed-out', reason: 'Your session has expired. Sign in again to continue.' }
}

function refused (reason: string | undefined): Phase {
  dropToken()
  queryClient.clear()
  return { kind: 'signed-out', reason: reason === undefined ? 'The server refused this sign-in. Sign in again to continue.' : `The server refused this sign-in: ${reason}` }
}

function SignIn ({ config, reason, error, onError }: { config: AuthConfig | null, reason?: string, error: string | null, onError: (e: string) => void }) {
  return (
    <div className='center'>
      <div className='card signin'>
        <h1>Gatehouse</h1>
        {reason !== undefined && <p className='banner warn' role='status'>{reason}</p>}
        {error !== null && <p className='banner error' role='alert'>{error}</p>}
        {config === null
          ? <p>The management API cannot be reached.</p>
          : config.local_issuer
            ? (
              <>
                <p>This server signs its own tokens. Open the console with a sign-in link made on the server:</p>
                <pre className='json'>npm run token -- --sub &lt;you&gt; --role &lt;viewer|editor|admin&gt; --url</pre>
                <p className='muted'>The link carries the token after <code>#</code>: it never reaches a server log, and the console keeps it for this tab only.</p>
              </>
              )
            : <button type='button' onClick={() => { startOidcSignIn(config).catch((e: Error) => onError(e.message)) }}>Sign in with {new URL(config.issuer).host}</button>}
      </div>
    </div>
  )
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <NoticeProvider><App /></NoticeProvider>
    </QueryClientProvider>
  </StrictMode>
)
