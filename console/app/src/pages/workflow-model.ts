/** Between the saved workflow definition and the graph the editor shows. */
import type { Edge, Node } from '@xyflow/react'
import type { NodeDescription } from '../../../../src/common/node-description'

/** A node type as the catalogue (GET /api/v1/workflows/nodes) describes it: the server's own type. */
export type NodeType = NodeDescription

export interface Definition {
  nodes: Array<{ id: string, name: string, type: string, settings: Record<string, unknown>, position?: { x: number, y: number } }>
  edges: Array<{ id?: string, source: string, target: string, sourceHandle?: string | null, targetHandle?: string | null }>
  runtime_settings?: Record<string, unknown>
}

/** What one node shows besides its settings: problems from validation, the last run's result. */
export interface NodeRun { status: 'running' | 'success' | 'error' | 'pinned', input?: unknown, output?: unknown, error?: string }

export interface NodeData extends Record<string, unknown> {
  name: string
  type: string
  settings: Record<string, unknown>
  problems: string[]
  /** What validation says a non-2xx answer does (HTTP request nodes). */
  notes?: string[]
  run: NodeRun | null
}

export type GraphNode = Node<NodeData, 'gh'>

export function fromDefinition (def: Definition | null): { nodes: GraphNode[], edges: Edge[] } {
  if (def === null) return { nodes: [], edges: [] }
  return {
    nodes: def.nodes.map((n, i) => ({
      id: n.id,
      type: 'gh',
      position: n.position ?? { x: 60 + i * 240, y: 120 },
      data: { name: n.name, type: n.type, settings: n.settings ?? {}, problems: [], run: null }
    })),
    edges: def.edges.map((e, i) => ({ id: e.id ?? `e${i}`, source: e.source, target: e.target, sourceHandle: e.sourceHandle ?? null, label: e.sourceHandle ?? undefined }))
  }
}

export function toDefinition (nodes: GraphNode[], edges: Edge[], runtime?: Record<string, unknown>): Definition {
  return {
    nodes: nodes.map(n => ({ id: n.id, name: n.data.name, type: n.data.type, settings: n.data.settings, position: { x: Math.round(n.position.x), y: Math.round(n.position.y) } })),
    edges: edges.map(e => ({ id: e.id, source: e.source, target: e.target, ...(e.sourceHandle != null ? { sourceHandle: e.sourceHandle } : {}) })),
    ...(runtime !== undefined ? { runtime_settings: runtime } : {})
  }
}

/** A fresh id and name for a node of `type`: 'trigger' for the entry, else its type without `_node`; numbered when taken. */
export function newNodeName (type: string, nodes: GraphNode[]): string {
  const base = type.endsWith('_trigger') || type === 'broker_consumer' ? 'trigger' : type.replace(/_node$/, '')
  const taken = new Set(nodes.flatMap(n => [n.id, n.data.name]))
  if (!taken.has(base)) return base
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`
}

/** Why an edge may not be drawn, in the catalogue's words; null when it may. */
export function edgeProblem (source: NodeType | undefined, target: NodeType | undefined, sourceHandle: string | null): string | null {
  if (target?.entry_trigger === true) return `${target.type} cannot have incoming edges. ${target.wiring_hint}`
  if (source?.terminal_node === true) return `${source.type} ends a path. ${source.wiring_hint}`
  if (source?.requires_source_handle === true && (sourceHandle === null || !source.supported_source_handles.includes(sourceHandle))) return `${source.type} needs a source handle (${source.supported_source_handles.join(', ')}). ${source.wiring_hint}`
  return null
}
