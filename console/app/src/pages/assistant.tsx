/** The assistant panel: until the assistant route is served, it says how to get one. */
import { useQuery } from '@tanstack/react-query'
import { get } from '../api'

export function AssistantPanel ({ onClose }: { onClose: () => void }) {
  const thread = useQuery({ queryKey: ['assistant-thread'], queryFn: async () => await get<{ messages?: unknown[] }>('/copilot/thread'), retry: false })
  const saved = Array.isArray(thread.data?.messages) ? thread.data.messages.length : 0
  return (
    <aside className='assistant' aria-label='Assistant'>
      <header><h2>Assistant</h2><button type='button' className='ghost' aria-label='Close assistant' onClick={onClose}>×</button></header>
      <p>The built-in assistant is not configured on this server.</p>
      <p>
        It acts through the management MCP endpoint (<code>/api/v1/mcp</code>) with your own token, so it can do exactly what your role allows.
        Once the server is started with an assistant model configured (see the server's README, "Assistant"), this panel becomes a chat.
      </p>
      <p className='muted'>Your saved conversation thread: {thread.isError ? 'unavailable' : `${saved} message${saved === 1 ? '' : 's'}`}.</p>
    </aside>
  )
}
