/**
 * The workflow builder: the proxy's workflow as a graph (@xyflow/react), nodes dragged
 * from the catalogue, settings forms from the catalogue, save with the server's
 * validation messages on the nodes they name, enable/disable, runs streamed node by
 * node, runs from one node with the last outputs pinned, versions, executions, and
 * trigger test-listen. A `proxy_workflow` event for this proxy reloads the graph when
 * nothing is unsaved (nodes it brings are placed in view); otherwise a banner offers to load
 * the saved one. Run sends the sample request of the run tab (sample-request.tsx).
 */
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import {
  Background, Controls, ReactFlow, ReactFlowProvider, addEdge, useEdgesState, useNodesState, useReactFlow,
  type Connection, type Edge, type EdgeChange, type NodeChange
} from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { ApiError, api, get, readStream, type Page } from '../api'
import { useChangeEvents } from '../events'
import { useCan } from '../session'
import { Banner, ErrorText, Status, when } from '../ui'
import { JsonView } from '../../../shared/json-view'
import { CatalogueContext, WorkflowNode } from './workflow-node'
import { SettingsForm } from './settings-form'
import { edgeProblem, fromDefinition, newNodeName, toDefinition, type Definition, type GraphNode, type NodeRun, type NodeType } from './workflow-model'
import type { Proxy } from './proxy-form'
import { SampleRequestForm, triggerInput, useSampleRequest } from './sample-request'
import { placeInView } from './place-in-view'

interface SavedWorkflow { proxy_id: string, workflow_id: string, workflow_enabled: boolean, workflow: Definition | null, version_number: number | null }
interface Problem { node_id: string | null, field?: string, message: string }

const nodeTypes = { gh: WorkflowNode }
const DRAG_TYPE = 'application/x-gatehouse-node'

interface Listening { button: string, waiting: (gateway: { methods: string[], path: string }) => string, captured: string }

/** What test-listen waits for, per entry trigger (manual_trigger has none: Run it). */
const LISTEN: Record<string, (settings: Record<string, unknown>) => Listening> = {
  http_trigger: () => ({
    button: 'Listen for a request',
    waiting: g => `Listening: send ${g.methods.join('/')} ${g.path} to the gateway within two minutes.`,
    captured: 'Request captured'
  }),
  cron_trigger: s => ({
    button: 'Fire the schedule once',
    waiting: () => `The schedule ${String(s.cron_expression ?? '')} fires once now (not waiting for its next slot).`,
    captured: 'Schedule fired'
  }),
  imap_trigger: s => ({
    button: 'Wait for an e-mail',
    waiting: () => `Listening: the first unseen e-mail in ${String(s.mailbox ?? 'Inbox')} starts a run, within two minutes. Nothing is marked as seen.`,
    captured: 'E-mail received'
  }),
  broker_consumer: s => ({
    button: 'Wait for a message',
    waiting: () => `Listening: the next message on topic ${String(s.topic ?? '')} starts a run, within two minutes (a throwaway consumer group from the newest offset; the workflow's own group is not moved).`,
    captured: 'Message received'
  })
}

export function WorkflowPage () {
  return <ReactFlowProvider><Builder /></ReactFlowProvider>
}

function Builder () {
  const { id = '' } = useParams()
  const canEdit = useCan('editor')
  const flow = useReactFlow()
  const queryClient = useQueryClient()
  const proxy = useQuery({ queryKey: ['proxy', id], queryFn: async () => await get<Proxy>(`/proxies/${id}`) })
  const saved = useQuery({ queryKey: ['workflow', id], queryFn: async () => await get<SavedWorkflow>(`/proxies/${id}/workflow`), staleTime: Infinity })
  const catalogue = useQuery({ queryKey: ['catalogue'], queryFn: async () => await get<Page<NodeType>>('/workflows/nodes'), staleTime: Infinity })
  const types = useMemo(() => new Map((catalogue.data?.items ?? []).map(t => [t.type, t])), [catalogue.data])

  const [nodes, setNodes, onNodesChange] = useNodesState<GraphNode>([])
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([])
  const [dirty, setDirty] = useState(false)
  const [remoteChange, setRemoteChange] = useState(false)
  const [selected, setSelected] = useState<string | null>(null)
  const [problems, setProblems] = useState<Problem[]>([])
  // What a non-2xx answer of each HTTP request node does, as validation says (before any run).
  const [statusRules, setStatusRules] = useState<Problem[]>([])
  const [hint, setHint] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [tab, setTab] = useState<'node' | 'run' | 'versions' | 'executions'>('node')
  const [execution, setExecution] = useState<any>(null)
  const [running, setRunning] = useState(false)
  const runtime = useRef<Record<string, unknown> | undefined>(undefined)
  const { sample, setSample, keep: keepSample } = useSampleRequest(proxy.data)
  const canvasRef = useRef<HTMLDivElement>(null)
  const onScreen = useRef<GraphNode[]>([])
  onScreen.current = nodes

  // The saved definition replaces the graph (first load, reload after a remote change, restore).
  const load = useCallback((w: SavedWorkflow) => {
    const g = fromDefinition(w.workflow)
    runtime.current = w.workflow?.runtime_settings
    // Nodes that another client added land inside the visible canvas, not off its edge.
    const rect = canvasRef.current?.getBoundingClientRect()
    const shownIds = new Set(onScreen.current.map(n => n.id))
    setNodes(rect === undefined || shownIds.size === 0 ? g.nodes : placeInView(g.nodes, shownIds, w.workflow, rect, flow.screenToFlowPosition))
    setEdges(g.edges)
    setDirty(false)
    setRemoteChange(false)
    setProblems([])
    setStatusRules([])
  }, [setNodes, setEdges, flow])
  // Our own save changes the saved record but not the graph on screen (nor its problems and outputs).
  const ownVersion = useRef<number | null>(null)
  useEffect(() => {
    if (saved.data !== undefined && (saved.data.version_number === null || saved.data.version_number !== ownVersion.current)) load(saved.data)
  }, [saved.data, load])

  useChangeEvents(e => {
    if (e.resource_kind !== 'proxy_workflow' || e.proxy_id !== id) return
    if (dirty) setRemoteChange(true)
    else void saved.refetch()
  })

  // Validation problems and run results are shown on the nodes they name.
  const shown = useMemo(() => nodes.map(n => {
    const p = problems.filter(x => x.node_id === n.id).map(x => x.message)
    const notes = statusRules.filter(x => x.node_id === n.id).map(x => x.message)
    const same = p.length === n.data.problems.length && p.every((x, i) => x === n.data.problems[i]) &&
      notes.length === (n.data.notes ?? []).length && notes.every((x, i) => x === n.data.notes?.[i])
    return same ? n : { ...n, data: { ...n.data, problems: p, notes } }
  }), [nodes, problems, statusRules])

  const edit = (fn: (ns: GraphNode[]) => GraphNode[]) => { setNodes(fn); setDirty(true) }
  const onNodes = (changes: NodeChange<GraphNode>[]) => {
    onNodesChange(changes)
    if (changes.some(c => c.type === 'remove' || (c.type === 'position' && c.dragging === true))) setDirty(true)
  }
  const onEdges = (changes: EdgeChange[]) => {
    onEdgesChange(changes)
    if (changes.some(c => c.type === 'remove')) setDirty(true)
  }
  const onConnect = (c: Connection) => {
    const source = nodes.find(n => n.id === c.source)
    const target = nodes.find(n => n.id === c.target)
    const problem = edgeProblem(types.get(source?.data.type ?? ''), types.get(target?.data.type ?? ''), c.sourceHandle ?? null)
    if (problem !== null) { setHint(problem); return }
    setHint(null)
    setEdges(es => addEdge({ ...c, id: `e_${c.source}_${c.sourceHandle ?? 'out'}_${c.target}`, label: c.sourceHandle ?? undefined }, es))
    setDirty(true)
  }
  const addNode = (type: string, position: { x: number, y: number }) => {
    edit(ns => {
      const name = newNodeName(type, ns)
      return [...ns, { id: name, type: 'gh', position, data: { name, type, settings: {}, problems: [], run: null } }]
    })
  }
  const onDrop = (e: DragEvent) => {
    e.preventDefault()
    const type = e.dataTransfer.getData(DRAG_TYPE)
    if (type !== '') addNode(type, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }))
  }

  const definition = () => toDefinition(nodes, edges, runtime.current)
  const showProblems = (err: unknown) => {
    if (err instanceof ApiError && Array.isArray(err.details)) setProblems(err.details as Problem[])
    setError(err)
  }
  const save = async (enabled?: boolean) => {
    setError(null); setNotice(null)
    try {
      const w = await api<SavedWorkflow>('PUT', `/proxies/${id}/workflow`, { workflow: definition(), ...(enabled !== undefined ? { enabled } : {}) })
      ownVersion.current = w.version_number
      queryClient.setQueryData(['workflow', id], w)
      setDirty(false)
      setRemoteChange(false)
      // A disabled workflow saves while incomplete: say what enabling it would need.
      const check = await api<{ valid: boolean, errors: Problem[], status_rules?: Problem[] }>('POST', `/proxies/${id}/workflow/validate`, {})
      setProblems(check.errors)
      setStatusRules(check.status_rules ?? [])
      setNotice(`Saved as version ${w.version_number ?? ''}.${check.valid ? '' : ' Fix the problems shown on the nodes before enabling it.'}`)
    } catch (err) { showProblems(err) }
  }

  const setRun = (nodeId: string, run: NodeRun | null) => setNodes(ns => ns.map(n => n.id === nodeId ? { ...n, data: { ...n.data, run } } : n))
  const showRecord = (record: any) => {
    setExecution(record)
    const byNode = new Map<string, any>((record?.nodes ?? []).map((r: any) => [r.node_id, r]))
    setNodes(ns => ns.map(n => {
      const r = byNode.get(n.id)
      return { ...n, data: { ...n.data, run: r === undefined ? null : { status: r.status, input: r.input, output: r.output, error: r.error?.message ?? (typeof r.error === 'string' ? r.error : undefined) } } }
    }))
  }
  const onFrame = (event: string, data: any) => {
    if (event === 'node_started') setRun(data.node_id, { status: 'running', input: data.input })
    else if (event === 'node_finished') setRun(data.node_id, { status: data.status === 'pinned' ? 'pinned' : 'success', output: data.output })
    else if (event === 'node_failed') setRun(data.node_id, { status: 'error', error: data.error?.message ?? String(data.error) })
    else if (event === 'execution') showRecord(data)
    else if (event === 'captured') setNotice(`${listening?.captured ?? 'Trigger fired'}; running the workflow…`)
    else if (event === 'expired' || event === 'cancelled') setNotice(`Listening ${event}.`)
  }
  const wf = saved.data?.workflow_id ?? ''
  const run = async (startNode?: string) => {
    setError(null); setNotice(null); setRunning(true); setTab('run')
    setNodes(ns => ns.map(n => ({ ...n, data: { ...n.data, run: null } })))
    try {
      const pinned = startNode === undefined ? undefined : Object.fromEntries(nodes.filter(n => n.id !== startNode && n.data.run?.output !== undefined).map(n => [n.id, n.data.run!.output]))
      const input = triggerInput(proxy.data, sample)
      keepSample()
      await readStream('POST', `/workflows/${wf}/test/stream`, { workflow: definition(), input, ...(startNode !== undefined ? { start_node: startNode, pinned_outputs: pinned } : {}) }, onFrame)
    } catch (err) { showProblems(err) } finally { setRunning(false) }
  }
  // Test-listen runs the saved workflow from what its own trigger receives next (the server's choice per kind).
  const entry = nodes.find(n => types.get(n.data.type)?.entry_trigger === true)?.data
  const listening = entry === undefined ? null : LISTEN[entry.type]?.(entry.settings) ?? null
  const listen = async () => {
    setError(null); setTab('run')
    try {
      const session = await api<{ id: string, gateway: { methods: string[], path: string } }>('POST', `/workflows/${wf}/trigger-test/listen`, { timeout_seconds: 120 })
      setNotice(listening?.waiting(session.gateway) ?? 'Listening.')
      await readStream('GET', `/workflows/${wf}/trigger-test/${session.id}/stream`, undefined, onFrame)
    } catch (err) { showProblems(err) }
  }

  if (saved.error != null || proxy.error != null) return <ErrorText error={saved.error ?? proxy.error} />
  if (saved.data === undefined || catalogue.data === undefined) return <p>Loading…</p>
  const sel = shown.find(n => n.id === selected) ?? null
  const enabled = saved.data.workflow_enabled
  return (
    <CatalogueContext.Provider value={types}>
      <section className='builder'>
        <div className='toolbar'>
          <h1>
            {proxy.data !== undefined && <Link to={`/collections/${proxy.data.collection_id}`} className='muted'>{proxy.data.name}</Link>} / workflow
          </h1>
          <Status value={enabled ? 'enabled' : 'disabled'} />
          {saved.data.version_number != null && <span className='muted'>version {saved.data.version_number}</span>}
          {dirty && <span className='pill draft'>unsaved</span>}
          <span className='grow' />
          {canEdit && <button type='button' className='ghost' disabled={running} onClick={() => { void run() }}>Run</button>}
          {canEdit && listening !== null && <button type='button' className='ghost' title={dirty ? 'Listens with the saved workflow' : undefined} onClick={() => { void listen() }}>{listening.button}</button>}
          {canEdit && <button type='button' className='ghost' onClick={() => { void save(!enabled) }}>{enabled ? 'Disable' : 'Enable'}</button>}
          {canEdit && <button type='button' onClick={() => { void save() }}>Save</button>}
        </div>
        {remoteChange && <Banner kind='warn'>This workflow was saved elsewhere while you have unsaved edits. <button type='button' onClick={() => { void saved.refetch().then(r => { if (r.data !== undefined) load(r.data) }) }}>Load the saved workflow</button> (discards your edits) or keep editing and save over it.</Banner>}
        {hint !== null && <Banner kind='warn'>{hint}</Banner>}
        {notice !== null && <Banner>{notice}</Banner>}
        <ErrorText error={error} />
        <div className='builder-body'>
          {canEdit && (
            <aside className='palette' aria-label='Node catalogue'>
              {(['trigger', 'action', 'flow', 'data'] as const).map(cat => (
                <div key={cat}>
                  <h3>{cat}</h3>
                  {catalogue.data.items.filter(t => t.category === cat).map(t => (
                    <div
                      key={t.type} className='palette-item' draggable title={t.description} data-type={t.type}
                      onDragStart={e => { e.dataTransfer.setData(DRAG_TYPE, t.type); e.dataTransfer.effectAllowed = 'move' }}
                      onDoubleClick={() => addNode(t.type, { x: 100 + nodes.length * 40, y: 80 + nodes.length * 40 })}
                    >{t.type}</div>
                  ))}
                </div>
              ))}
            </aside>
          )}
          <div className='canvas' ref={canvasRef} onDragOver={e => { e.preventDefault(); e.dataTransfer.dropEffect = 'move' }} onDrop={onDrop}>
            <ReactFlow
              nodes={shown} edges={edges} nodeTypes={nodeTypes}
              onNodesChange={onNodes} onEdgesChange={onEdges} onConnect={onConnect}
              onNodeClick={(_, n) => { setSelected(n.id); setTab('node') }} onPaneClick={() => setSelected(null)}
              nodesDraggable={canEdit} nodesConnectable={canEdit} elementsSelectable
              deleteKeyCode={canEdit ? ['Backspace', 'Delete'] : null}
              fitView={(saved.data.workflow?.nodes.length ?? 0) > 0} fitViewOptions={{ maxZoom: 1 }} proOptions={{ hideAttribution: true }}
            >
              <Background /><Controls showInteractive={false} />
            </ReactFlow>
          </div>
          <aside className='panel'>
            <div className='tabs' role='tablist'>
              {(['node', 'run', 'versions', 'executions'] as const).map(t => <button key={t} type='button' role='tab' aria-selected={tab === t} className={tab === t ? 'active' : ''} onClick={() => setTab(t)}>{t}</button>)}
            </div>
            {tab === 'node' && (sel === null
              ? <p className='muted'>Select a node to edit its settings. Drag node types from the catalogue onto the canvas; connect a node's right handle to another's left one.</p>
              : <NodePanel key={sel.id} node={sel} spec={types.get(sel.data.type)} readOnly={!canEdit}
                  onRename={name => edit(ns => ns.map(n => n.id === sel.id ? { ...n, data: { ...n.data, name } } : n))}
                  onSettings={settings => edit(ns => ns.map(n => n.id === sel.id ? { ...n, data: { ...n.data, settings } } : n))}
                  onRunFrom={canEdit ? () => { void run(sel.id) } : undefined} />)}
            {tab === 'run' && (
              <>
                {proxy.data !== undefined && sample !== null && (entry === undefined || entry.type === 'http_trigger') &&
                  <SampleRequestForm proxy={proxy.data} sample={sample} onChange={setSample} readOnly={!canEdit} />}
                <RunPanel execution={execution} running={running} />
              </>
            )}
            {tab === 'versions' && <VersionsPanel workflowId={wf} canEdit={canEdit} onRestored={() => { void saved.refetch() }} />}
            {tab === 'executions' && <ExecutionsPanel workflowId={wf} canEdit={canEdit} onShow={showRecord} />}
          </aside>
        </div>
      </section>
    </CatalogueContext.Provider>
  )
}

function NodePanel ({ node, spec, readOnly, onRename, onSettings, onRunFrom }: { node: GraphNode, spec: NodeType | undefined, readOnly: boolean, onRename: (n: string) => void, onSettings: (s: Record<string, unknown>) => void, onRunFrom?: () => void }) {
  return (
    <div>
      <label className='field'><span>Name</span><input aria-label='Node name' value={node.data.name} disabled={readOnly} onChange={e => onRename(e.target.value)} /></label>
      <p className='muted'>{node.data.type}: {spec?.description}</p>
      {spec !== undefined && <SettingsForm spec={spec} settings={node.data.settings} readOnly={readOnly} onChange={onSettings} />}
      {node.data.problems.map((p, i) => <Banner key={i} kind='error'>{p}</Banner>)}
      {(node.data.notes ?? []).map((p, i) => <p key={i} className='muted' data-testid='status-rule'>{p}</p>)}
      {onRunFrom !== undefined && <button type='button' className='ghost' onClick={onRunFrom}>Run from this node</button>}
      {node.data.run !== null && (
        <>
          <h3>Input</h3><JsonView value={node.data.run.input ?? null} label={`Input of ${node.data.name}`} />
          <h3>Output</h3><JsonView value={node.data.run.error ?? node.data.run.output ?? null} label={`Output of ${node.data.name}`} />
        </>
      )}
      {spec !== undefined && <p className='muted small'>Outputs: {spec.outputs}<br />{spec.wiring_hint}</p>}
    </div>
  )
}

function RunPanel ({ execution, running }: { execution: any, running: boolean }) {
  if (running && execution === null) return <p>Running…</p>
  if (execution === null) return <p className='muted'>Run the workflow to see each node's input and output here and on the nodes.</p>
  return (
    <div>
      <p><Status value={execution.status} /> {execution.mode} · {execution.duration_ms} ms</p>
      {execution.error !== null && <Banner kind='error'>{execution.error.message}</Banner>}
      <h3>Response</h3>
      <JsonView value={execution.response} label='Workflow response' />
      {(execution.nodes ?? []).map((n: any, i: number) => (
        <details key={i}><summary>{n.name} <Status value={n.status} /></summary><JsonView value={n.output ?? n.error} /></details>
      ))}
    </div>
  )
}

function VersionsPanel ({ workflowId, canEdit, onRestored }: { workflowId: string, canEdit: boolean, onRestored: () => void }) {
  const versions = useQuery({ queryKey: ['versions', workflowId], queryFn: async () => await get<Page<any>>(`/workflows/${workflowId}/versions?limit=50`) })
  const [error, setError] = useState<unknown>(null)
  return (
    <div>
      <ErrorText error={error ?? versions.error} />
      {versions.data?.items.length === 0 && <p className='muted'>No saved versions yet.</p>}
      <ul className='plain'>
        {versions.data?.items.map(v => (
          <li key={v.id}>
            <strong>v{v.number}</strong> {v.enabled === true ? 'enabled' : ''} <span className='muted'>{v.actor_sub} · {when(v.created_at)}</span>
            {canEdit && <button type='button' className='ghost' onClick={() => { api('POST', `/workflows/${workflowId}/versions/${v.id}/restore`).then(onRestored, setError) }}>Restore</button>}
          </li>
        ))}
      </ul>
    </div>
  )
}

function ExecutionsPanel ({ workflowId, canEdit, onShow }: { workflowId: string, canEdit: boolean, onShow: (r: any) => void }) {
  const list = useQuery({ queryKey: ['executions', workflowId], queryFn: async () => await get<Page<any>>(`/workflows/${workflowId}/executions?limit=50`) })
  const [error, setError] = useState<unknown>(null)
  return (
    <div>
      <ErrorText error={error ?? list.error} />
      {list.data?.items.length === 0 && <p className='muted'>No stored executions (runtime settings decide which runs are kept).</p>}
      <ul className='plain'>
        {list.data?.items.map(x => (
          <li key={x.id}>
            <Status value={x.status} /> {x.mode} <span className='muted'>{when(x.started_at)} · {x.duration_ms} ms</span>
            <button type='button' className='ghost' onClick={() => onShow(x)}>Show</button>
            {canEdit && <button type='button' className='ghost' onClick={() => { api('POST', `/workflows/${workflowId}/executions/${x.id}/replay`).then(r => { onShow(r); void list.refetch() }, setError) }}>Replay</button>}
          </li>
        ))}
      </ul>
    </div>
  )
}
