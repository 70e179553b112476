/** A node on the canvas: its name and type, handles from the catalogue, validation problems, the last run's output. */
import { createContext, useContext } from 'react'
import { Handle, Position, type NodeProps } from '@xyflow/react'
import type { GraphNode, NodeType } from './workflow-model'

export const CatalogueContext = createContext<Map<string, NodeType>>(new Map())

const preview = (v: unknown) => { const t = JSON.stringify(v); return t === undefined ? '' : t.length > 80 ? `${t.slice(0, 80)}…` : t }

export function WorkflowNode ({ data, selected }: NodeProps<GraphNode>) {
  const spec = useContext(CatalogueContext).get(data.type)
  const handles = spec?.supported_source_handles ?? []
  const run = data.run
  return (
    <div className={`wf-node ${spec?.category ?? ''} ${selected ? 'selected' : ''} ${data.problems.length > 0 ? 'invalid' : ''}`} data-node-name={data.name} data-testid={`node-${data.name}`}>
      {spec?.entry_trigger !== true && <Handle type='target' position={Position.Left} />}
      <div className='wf-title'>{data.name}</div>
      <div className='wf-type'>{data.type}</div>
      {data.problems.map((p, i) => <div key={i} className='wf-problem' role='alert'>{p}</div>)}
      {run !== null && (
        <div className={`wf-run ${run.status}`} aria-label={`Output of ${data.name}`}>
          <strong>{run.status}</strong> {run.error ?? preview(run.output)}
        </div>
      )}
      {spec?.terminal_node !== true && (handles.length === 0
        ? <Handle type='source' position={Position.Right} />
        : handles.map((h, i) => (
          <Handle key={h} id={h} type='source' position={Position.Right} style={{ top: `${((i + 1) * 100) / (handles.length + 1)}%` }}>
            <span className='wf-handle-label'>{h}</span>
          </Handle>
        )))}
    </div>
  )
}
