/**
 * Management change events (spec: Events). Change hints only: ids and an
 * operation, never a resource body or a secret.
 */

export type ResourceKind = 'proxy_workflow' | 'collection' | 'proxy' | 'credential' | 'policy' | 'client' | 'profile' | 'trigger_status'

interface Envelope {
  schema_version: 1
  actor_sub?: string
  occurred_at_unix: number
}

export type ManagementEvent = Envelope & (
  | { resource_kind: 'proxy_workflow', proxy_id: string, definition_changed: boolean, enabled_changed: boolean, workflow_enabled: boolean }
  | { resource_kind: 'collection', collection_id: string, operation: 'created' | 'updated' | 'deleted' | 'status_changed' | 'duplicated' | 'imported' | 'openapi_imported', related_collection_id?: string }
  | { resource_kind: 'proxy', proxy_id: string, collection_id: string, operation: 'created' | 'updated' | 'deleted' }
  | { resource_kind: 'credential', credential_id: string, operation: 'created' | 'updated' | 'deleted' }
  | { resource_kind: 'policy', policy_id: string, operation: 'created' | 'updated' | 'deleted' | 'status_changed' }
  | { resource_kind: 'client', client_id: string, operation: 'created' | 'updated' | 'deleted' | 'status_changed' }
  | { resource_kind: 'profile', profile_id: string, client_id: string, operation: 'created' | 'updated' | 'deleted' }
  // A production trigger changed state (running, stopped, failing); GET /api/v1/triggers/:proxyId has the details.
  | { resource_kind: 'trigger_status', proxy_id: string, workflow_id: string, trigger_type: string, state: string, previous_state: string }
)

/** Distributive Omit so each variant keeps its own fields. */
export type EventInput = ManagementEvent extends infer E ? E extends ManagementEvent ? Omit<E, 'schema_version' | 'occurred_at_unix'> : never : never

/** What the management routes publish to after a successful persist. */
export interface EventSink {
  publish (event: EventInput): void
}
