import { pino, destination, stdTimeFunctions, type Logger } from 'pino'
import type { Config } from './config/config.js'

export type { Logger }

/**
 * One pino logger. Lines are buffered (4 KiB) and written asynchronously so
 * access logging stays off the hot path; a timer flushes quiet periods.
 */
export function createLogger (config: Pick<Config, 'LOG_LEVEL'>): Logger {
  const logger = pino({
    level: config.LOG_LEVEL,
    base: { service: 'gatehouse' },
    timestamp: stdTimeFunctions.isoTime
  }, destination({ sync: false, minLength: 4096 }))
  setInterval(() => { logger.flush() }, 1000).unref()
  return logger
}
