// The same suite on the node HTTP layer (GATEWAY_SERVER=node).
process.env.GATEWAY_SERVER = 'node'
await import('../responses/cache.test.js')
