import { pino, destination, stdTimeFunctions, type Logger } from 'pino'
import type { Config } from './config/config.js'

export type { Logger }

/** One pino logger; access lines go through it as data, buffered off the hot path. */
export function createLogger (config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({
    level: config.LOG_LEVEL,
    base: { service: 'gatehouse' },
    timestamp: stdTimeFunctions.isoTime
  }, destination({ sync: false, minLength: 4096 }))
}
