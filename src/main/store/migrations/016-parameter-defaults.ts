import type { Migration } from './index.js'

/** Whether a proxy adds its query parameters' defaults to the forwarded query (off: the query is kept as sent). */
export const m016ParameterDefaults: Migration = {
  version: 16,
  name: 'proxy apply_parameter_defaults',
  sql: 'ALTER TABLE proxies ADD COLUMN apply_parameter_defaults boolean NOT NULL DEFAULT false;'
}
