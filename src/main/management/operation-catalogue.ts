/**
 * What each management operation is called and how it is described, keyed by its REST route.
 * The MCP tool list and the OpenAPI document both read this table together with the route's
 * own role and body schema, so a tool's input schema is the route's schema, never a copy.
 * A route missing here is not an operation for agents (probes, the event stream, threads).
 */

import type { ToolCategory } from './operation-category.js'

export interface OperationInfo {
  /** MCP tool name and OpenAPI operationId. */
  name: string
  /** Written for an agent: what it does, when to use it, what comes back. */
  description: string
  /** Query parameters the route reads (JSON Schema per name). */
  query?: Record<string, Record<string, unknown>>
  /** Streams frames (SSE over REST; progress notifications over MCP). */
  streaming?: boolean
  /** The route takes its body unparsed; over MCP it is this argument, sent as JSON. */
  rawArg?: { name: string, description: string }
  /** The raw body's media types with their schemas, for the OpenAPI document (default: a JSON object). */
  rawTypes?: Record<string, Record<string, unknown>>
  /** Error statuses the operation answers besides 400, 401, 403 and 404, each with what it means (OpenAPI). */
  errors?: Record<string, string>
  /** Reads nothing and changes nothing outside the gateway (an MCP client may call it freely). */
  readOnly?: boolean
  /** Removes something. */
  destructive?: boolean
  /**
   * Answer fields (at any depth) that hold secret material: an agent shows them to its user only,
   * and the built-in assistant asks the user before calling the operation at all.
   */
  secrets?: readonly string[]
  /** The tool category, where the route's path does not give it (operation-category.ts). */
  category?: ToolCategory
}

const page = {
  limit: { type: 'integer', minimum: 1, maximum: 500, default: 50, description: 'Page size (1-500).' },
  cursor: { type: 'string', description: 'The next_cursor of the previous page.' }
}
const text = (description: string) => ({ type: 'string', description })
const time = (description: string) => ({ type: 'string', format: 'date-time', description })
/** The profile secrets an answer may carry (an api_key's token, a jwt profile's signing key). */
const PROFILE_SECRETS = ['api_key', 'jwt_secret']
const LIST = ' Answers {items, next_cursor}; pass next_cursor back as cursor for the next page.'

export const OPERATIONS: Record<string, OperationInfo> = {
  // Collections
  'GET /api/v1/collections': { name: 'list_collections', readOnly: true, query: page, description: 'List collections (groups of proxies under one base_path, forwarding to their upstream: one upstream_url or several balanced targets).' + LIST },
  'GET /api/v1/collections/:id': { name: 'get_collection', readOnly: true, description: 'Read one collection by id.' },
  'GET /api/v1/collections/:id/upstream/health': {
    name: 'get_upstream_health',
    readOnly: true,
    description: "This gateway instance's view of a collection's upstream targets: per target url, weight, state (healthy, unhealthy from active checks, ejected after failures on real traffic), since, last_error, and its addresses with requests in flight. Each instance judges health on its own."
  },
  'POST /api/v1/collections': { name: 'create_collection', description: 'Create a collection: name, base_path (unique, starts with /), the backend as upstream_url (one base URL) or upstream (targets with weights, balancing, health_checks, retries, max_in_flight_per_target), optional headers, status, auth_required, cors (browser access from other origins). Proxies are added with create_proxy.' },
  'PUT /api/v1/collections/:id': { name: 'update_collection', description: 'Change fields of a collection; send only the fields to change. A partial upstream object keeps its other fields; upstream_url replaces the targets with that one URL.' },
  'DELETE /api/v1/collections/:id': { name: 'delete_collection', destructive: true, description: 'Delete a collection and all its proxies; they stop being served at once.' },
  'PUT /api/v1/collections/:id/status': { name: 'set_collection_status', description: "Set a collection 'active' or 'disabled' (without status: toggle). A disabled collection serves none of its proxies." },
  'POST /api/v1/collections/:id/duplicate': { name: 'duplicate_collection', description: 'Copy a collection with all its proxies (the copies are drafts). Give a new base_path unless the copy should get a generated one.' },
  'GET /api/v1/config': { name: 'dump_config', readOnly: true, category: 'collections', description: 'The whole gateway configuration as one file (format_version 1): collections with proxies and workflows, policies, clients with profiles, credentials; keyed by names, no ids, no secrets (credential secrets as ${ENV} references). For review, diffs and keeping the gateway in git.' },
  'POST /api/v1/config/apply': {
    name: 'apply_config',
    category: 'collections',
    destructive: true,
    query: {
      dry_run: { type: 'boolean', description: 'Only answer what would change; change nothing.' },
      prune: { type: 'boolean', description: 'Also delete the resources the file does not name (default: they stay).' }
    },
    rawArg: { name: 'file', description: 'The configuration file (the object dump_config returns, edited), with credential secrets as values, not ${ENV} references.' },
    rawTypes: { 'application/json': { $ref: '/api/v1/config/schema.json' }, 'application/yaml': { $ref: '/api/v1/config/schema.json' } },
    errors: { 409: 'CONFIG_FILE is set: the configuration comes from that file.', 412: 'If-Match names another configuration version: the configuration changed since it was read.', 415: 'The body is neither JSON nor YAML.' },
    description: 'Make the whole gateway match a configuration file in one transaction: creates and updates collections, proxies with workflows, policies, clients with profiles and credentials (by their keys); with prune also deletes what the file does not name. All or nothing: an invalid file changes nothing and the error lists every problem with its path in the file. Answers {changes: [{kind, key, action}], applied, version}. Call with dry_run first to review the changes.'
  },
  'GET /api/v1/collections/export': { name: 'export_collections', readOnly: true, query: { ids: text('Comma-separated collection ids; all collections when absent.') }, description: 'Export collections with their proxies and workflows as one Gatehouse file (re-importable with import_collections).' },
  'GET /api/v1/collections/:id/export': { name: 'export_collection', readOnly: true, description: 'Export one collection with its proxies and workflows as a Gatehouse file.' },
  'GET /api/v1/collections/:id/openapi': {
    name: 'get_collection_openapi',
    readOnly: true,
    query: { version: { type: 'string', enum: ['3.0', '3.1'] }, server_url: text('Server URL to put in the document.'), include_drafts: { type: 'boolean', description: 'Also describe draft proxies.' } },
    description: "Generate the OpenAPI document of a collection's published proxies (paths, parameters, request and response schemas)."
  },
  'POST /api/v1/collections/import': {
    name: 'import_collections',
    query: { keep_status: { type: 'boolean', description: 'Keep published proxies published (default: import as drafts).' } },
    rawArg: { name: 'file', description: 'The Gatehouse export file (the object export_collections returns).' },
    description: 'Import collections from a Gatehouse export file; proxies arrive as drafts unless keep_status is true.'
  },
  'POST /api/v1/collections/import/openapi': {
    name: 'import_openapi',
    query: { name: text('Collection name (default: the document title).'), base_path: text('Collection base_path (default: from the document).'), upstream_url: text('Backend base URL (default: the first server).') },
    rawArg: { name: 'document', description: 'The OpenAPI 3.x document (JSON object).' },
    description: 'Create a collection from an OpenAPI 3.x document: one draft proxy per operation, with parameters and schemas. Answers the collection with proxy_count and warnings.'
  },

  // Proxies
  'GET /api/v1/proxies': { name: 'list_proxies', readOnly: true, query: { ...page, collection_id: text('Only proxies of this collection.') }, description: 'List proxies, optionally of one collection.' + LIST },
  'GET /api/v1/proxies/:id': { name: 'get_proxy', readOnly: true, description: 'Read one proxy (path, methods, target_path, schemas, status, workflow_enabled, workflow_id).' },
  'POST /api/v1/proxies': { name: 'create_proxy', description: 'Create a proxy (an endpoint) in a collection: collection_id, name, methods, path (relative to the base_path; {param} segments, optional trailing /*), target_path (default: path). It starts as a draft: publish it with update_proxy {status: "published"}.' },
  'PUT /api/v1/proxies/:id': { name: 'update_proxy', description: "Change a proxy's fields; {status: 'published'} makes it reachable at the gateway, {status: 'draft'} takes it off at once." },
  'DELETE /api/v1/proxies/:id': { name: 'delete_proxy', destructive: true, description: 'Delete a proxy; it stops being served at once.' },
  'DELETE /api/v1/proxies/:id/cache': { name: 'purge_proxy_cache', destructive: true, description: "Drop a proxy's cached answers (its response cache) on every gateway instance; the next requests reach the backend again." },
  'POST /api/v1/proxies/bulk': { name: 'bulk_proxies', description: "Publish, unpublish or delete several proxies: {action: 'publish'|'unpublish'|'delete', ids}. Answers per-id results." },
  'POST /api/v1/proxies/:id/duplicate': { name: 'duplicate_proxy', description: 'Copy a proxy (as a draft), into the same or another collection (collection_id); give a new path when copying into the same collection.' },

  // A proxy's workflow
  'GET /api/v1/proxies/:id/workflow': { name: 'get_proxy_workflow', readOnly: true, description: "Read a proxy's workflow definition, enabled flag, workflow_id and current version." },
  'PUT /api/v1/proxies/:id/workflow': { name: 'update_proxy_workflow', description: "Save a proxy's workflow definition ({workflow: {nodes, edges, runtime_settings}}) and/or its enabled flag ({enabled}); each save with a definition adds a version. Call workflow_list_nodes first for node settings and edge handles, and validate_proxy_workflow before saving." },
  'POST /api/v1/proxies/:id/workflow/validate': { name: 'validate_proxy_workflow', description: 'Check a workflow definition (or the saved one) without saving: answers {valid, errors[], warnings[], status_rules[]}: errors with node_id and field per problem; status_rules say, per http_request_node, what a non-2xx answer will do (rule continue_on_error, condition with condition_node_id, or fails).' },

  // Workflows
  'GET /api/v1/workflows/nodes': { name: 'workflow_list_nodes', readOnly: true, description: 'List every node type with its settings schema, outputs and edge-authoring hints (entry_trigger, terminal_node, requires_source_handle, supported_source_handles, default_source_handle, dynamic_source_handles, wiring_hint). Read this before writing a workflow: edges from condition_node need sourceHandle true/false, from loop_node loop/done.' },
  'GET /api/v1/workflows/nodes/:type': { name: 'workflow_get_node', readOnly: true, description: 'Describe one node type (settings schema, outputs, edge-authoring hints).' },
  'POST /api/v1/workflows/:workflowId/test': { name: 'workflow_test_workflow', description: 'Run a workflow from its trigger with a test input ({input, pinned_outputs?, workflow?}: default the saved definition) and answer the execution record with per-node inputs and outputs. Works while the workflow is disabled.' },
  'POST /api/v1/workflows/:workflowId/test/stream': { name: 'workflow_test_workflow_stream', streaming: true, description: 'Like workflow_test_workflow, but reports each node as it starts and finishes through progress notifications; answers the execution record.' },
  'POST /api/v1/workflows/:workflowId/execute-partial': { name: 'execute_workflow_partial', description: 'Run part of a workflow: up to destination_node and/or from start_node, with pinned_outputs standing in for nodes that are not run. Nothing is stored.' },
  'POST /api/v1/workflows/:workflowId/nodes/:nodeId/test': { name: 'workflow_test_node', description: 'Run one node with node_input (or pinned outputs of its upstream nodes) and answer its output. Nothing is stored.' },
  'POST /api/v1/workflows/:workflowId/manual-run': { name: 'workflow_manual_run', description: 'Run a manual_trigger workflow as saved; answers the execution record.' },
  'POST /api/v1/workflows/:workflowId/trigger-test/listen': { name: 'workflow_trigger_test_listen', description: "Start waiting for the next real trigger event of a workflow (the next request to the proxy's gateway path), even while the workflow is disabled. Answers a listen session; follow it with workflow_trigger_test_stream." },
  'GET /api/v1/workflows/:workflowId/trigger-test/:listenId/stream': { name: 'workflow_trigger_test_stream', streaming: true, description: 'Follow a listen session from workflow_trigger_test_listen: reports the captured event and each node of the run through progress notifications and answers every frame when the session ends.' },
  'DELETE /api/v1/workflows/:workflowId/trigger-test/:listenId': { name: 'workflow_trigger_test_stop', description: 'Stop a listen session that is still waiting.' },
  'GET /api/v1/workflows/:workflowId/executions': { name: 'list_workflow_executions', readOnly: true, query: { ...page, status: text('Only executions with this status (success, error, …).'), mode: text('Only executions of this mode (production, test, manual, …).') }, description: 'List stored executions of a workflow, newest first.' + LIST },
  'GET /api/v1/workflows/:workflowId/executions/:executionId': { name: 'get_workflow_execution', readOnly: true, description: 'Read one execution with per-node inputs (node_inputs), outputs and errors.' },
  'POST /api/v1/workflows/:workflowId/executions/:executionId/replay': { name: 'replay_workflow_execution', description: 'Run a stored execution again with the same trigger input, against the saved definition.' },
  'GET /api/v1/workflows/:workflowId/versions': { name: 'list_workflow_versions', readOnly: true, query: page, description: 'List the saved versions of a workflow, newest first.' + LIST },
  'GET /api/v1/workflows/:workflowId/versions/:versionId': { name: 'get_workflow_version', readOnly: true, description: 'Read one saved version of a workflow with its definition.' },
  'POST /api/v1/workflows/:workflowId/versions/:versionId/restore': { name: 'restore_workflow_version', description: "Make a saved version the workflow's current definition (saved as a new version); the enabled flag is unchanged." },

  // Credentials
  'GET /api/v1/credentials': { name: 'list_credentials', readOnly: true, query: { ...page, type: text('Only credentials of this type.') }, description: 'List stored credentials (secrets come back masked).' + LIST },
  'GET /api/v1/credentials/:id': { name: 'get_credential', readOnly: true, description: 'Read one credential (secrets masked).' },
  'POST /api/v1/credentials': { name: 'create_credential', description: 'Store connection settings for an external system: name, type (imap, kafka, http_basic, http_bearer, …), config. Secrets are encrypted and never shown again.' },
  'PUT /api/v1/credentials/:id': { name: 'update_credential', description: 'Change a credential; a secret field sent as "********" keeps the stored secret.' },
  'DELETE /api/v1/credentials/:id': { name: 'delete_credential', destructive: true, description: 'Delete a credential.' },
  'POST /api/v1/credentials/validate': { name: 'validate_credential', description: 'Test a live connection without saving ({type: "imap", config}): connects and lists the mailbox.' },

  // Policies
  'GET /api/v1/policies': { name: 'list_policies', readOnly: true, query: page, description: 'List access policies (rate limit and quota rules).' + LIST },
  'GET /api/v1/policies/:id': { name: 'get_policy', readOnly: true, description: 'Read one access policy.' },
  'POST /api/v1/policies': { name: 'create_policy', description: "Create an access policy: name, rate_limit {requests, per_seconds}, quota {requests, period: 'day'|'month'}, status. Attach it to a profile with update_profile {policy_id}." },
  'PUT /api/v1/policies/:id': { name: 'update_policy', description: 'Change an access policy; profiles using it get the new limits at once.' },
  'PUT /api/v1/policies/:id/toggle-status': { name: 'toggle_policy_status', description: "Set a policy 'enabled' or 'disabled' (without status: toggle)." },
  'DELETE /api/v1/policies/:id': { name: 'delete_policy', destructive: true, description: 'Delete an access policy (refused while profiles use it).' },

  // Clients and profiles
  'GET /api/v1/clients': { name: 'list_clients', readOnly: true, query: page, description: 'List API clients (the consumers of published APIs).' + LIST },
  'GET /api/v1/clients/:id': { name: 'get_client', readOnly: true, description: 'Read one API client.' },
  'POST /api/v1/clients': { name: 'create_client', description: 'Create an API client (name, description). Give it access with create_profile.' },
  'PUT /api/v1/clients/:id': { name: 'update_client', description: "Change an API client's name, description or status." },
  'PUT /api/v1/clients/:id/status': { name: 'set_client_status', description: "Set a client 'active' or 'suspended' (without status: toggle); a suspended client gets 403 at the gateway." },
  'DELETE /api/v1/clients/:id': { name: 'delete_client', destructive: true, description: 'Delete an API client and its profiles.' },
  'GET /api/v1/clients/:clientId/profiles': { name: 'list_profiles', readOnly: true, query: page, description: 'List the access profiles of a client.' + LIST },
  'GET /api/v1/clients/:clientId/profiles/:id': { name: 'get_profile', readOnly: true, description: 'Read one access profile (auth_type, policy_id, collection_ids).' },
  'POST /api/v1/clients/:clientId/profiles': { name: 'create_profile', secrets: PROFILE_SECRETS, description: "Create an access profile for a client: name, auth_type (api_key, jwt, oidc, mtls, none), policy_id, collection_ids it may call. Answers the new credentials once (an api_key's token): give them to the client's developer." },
  'PUT /api/v1/clients/:clientId/profiles/:id': { name: 'update_profile', description: "Change an access profile's name, policy, collections or restrictions." },
  'DELETE /api/v1/clients/:clientId/profiles/:id': { name: 'delete_profile', destructive: true, description: 'Delete an access profile; its credentials stop working at once.' },
  'POST /api/v1/clients/:clientId/profiles/:id/rotate': { name: 'rotate_profile_credentials', secrets: PROFILE_SECRETS, description: 'Issue new credentials for a profile; the old ones stop working at once. A no-op for oidc and mtls profiles.' },
  'PUT /api/v1/clients/:clientId/profiles/:id/auth-type': { name: 'set_profile_auth_type', secrets: PROFILE_SECRETS, description: "Change a profile's authentication type (with oidc settings or mtls_fingerprint where needed); answers new credentials when the type issues them." },
  'GET /api/v1/clients/:clientId/profiles/:id/credentials': { name: 'get_profile_credentials', readOnly: true, secrets: PROFILE_SECRETS, description: "Read a profile's secret material (an api_key's token, a jwt profile's signing key)." },

  // Audit, metrics, request logs
  'GET /api/v1/audit-logs': {
    name: 'list_audit_logs',
    readOnly: true,
    query: {
      ...page,
      actor_sub: text('Only changes by this user (OIDC sub).'),
      resource_kind: text('collection, proxy, credential, policy, client, profile, …'),
      resource_id: text('Only entries about this record.'),
      action: text('create, update, delete, status_change, denied, …'),
      source: { type: 'string', enum: ['rest', 'mcp', 'assistant', 'config_file'], description: 'Only entries made through this surface (assistant: the built-in assistant\'s tool calls, reads included; config_file: the changes of loading CONFIG_FILE).' },
      tool: text('Only the assistant\'s calls of this tool.'),
      since: time('Entries at or after this time.'),
      until: time('Entries before this time.'),
      order: { type: 'string', enum: ['asc', 'desc'] }
    },
    description: 'List the audit trail: who changed what through REST or MCP, and refused requests.' + LIST
  },
  'GET /api/v1/metrics': { name: 'get_metrics', readOnly: true, description: 'Gateway traffic metrics: request counts, errors and latency per collection and proxy.' },
  'GET /api/v1/request-logs': {
    name: 'list_request_logs',
    readOnly: true,
    query: {
      ...page,
      collection_id: text('Only requests to this collection.'),
      proxy_id: text('Only requests to this proxy.'),
      client_id: text('Only requests of this client.'),
      profile_id: text('Only requests of this profile.'),
      status: { type: 'integer', minimum: 100, maximum: 599, description: 'Only answers with this HTTP status.' },
      method: text('Only this HTTP method.'),
      since: time('Requests at or after this time.'),
      until: time('Requests before this time.'),
      trace_id: { type: 'string', pattern: '^[0-9a-fA-F]{32}$', description: 'Only the requests of this trace (32 hexadecimal digits, as in traceparent and the access line).' }
    },
    description: 'List recent gateway requests (status, latency, upstream status, error code), newest first. Start here to diagnose a failing proxy.' + LIST
  }
}

export const operationKey = (method: string, segments: string[]): string => `${method} /${segments.join('/')}`
