import { pino, destination, stdTimeFunctions, type Logger } from 'pino'
import { PinoPretty } from 'pino-pretty'
import type { Config } from './config/config.js'

export type { Logger }

/** `auto`: human-readable lines on a terminal, JSON (one object a line) everywhere else. */
export function prettyLogs (format: Config['LOG_FORMAT'], isTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && isTty)
}

/**
 * One pino logger. JSON lines are buffered (4 KiB) and written asynchronously
 * so access logging stays off the hot path; a timer flushes quiet periods.
 * Pretty lines are formatted in-process (no transport thread): they are for a
 * person at a terminal, not for throughput.
 */
export function createLogger (config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>): Logger {
  const pretty = prettyLogs(config.LOG_FORMAT)
  const stream = pretty
    ? PinoPretty({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true })
    : destination({ sync: false, minLength: 4096 })
  const logger = pino({
    level: config.LOG_LEVEL,
    base: { service: 'gatehouse' },
    timestamp: stdTimeFunctions.isoTime
  }, stream)
  if (!pretty) setInterval(() => { logger.flush() }, 1000).unref()
  return logger
}
