/**
 * The gateway's pino logger: JSON lines on stdout, buffered and written in batches, so the access
 * line of every request costs a string concatenation, not a write system call (like nginx's
 * `access_log … buffer=32k flush=1s`; line-buffer.ts says why, why a file is written synchronously
 * and a pipe not, and why 4 KiB on a shared pipe).
 *
 *   logger.info(…) ─► serializers + redaction (redact.ts) ─► buffer (log.buffer bytes)
 *        ─► one write when full, every log.flush_interval seconds, on close
 *           (flushLogger: SIGTERM, SIGINT, a reload's drain), and synchronously at exit
 *
 * No line is lost on a clean stop: the drain awaits flushLogger before the process exits, and the
 * buffer writes whatever is left synchronously on `exit`.
 */
import { openSync } from 'node:fs'
import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogConfig } from '../config/types.ts'
import { markPlainAccessLine } from './access-line.ts'
import { CAPPED_FIELDS, capField, LOG_URL_MAX } from './field-cap.ts'
import { LineBuffer } from './line-buffer.ts'
import { CENSOR, redactPaths, redactUrl, sessionHash } from './redact.ts'

/** Defaults for a `LogConfig` built in code with only a level (tests, benchmarks). */
const DEFAULTS: Omit<LogConfig, 'level'> = {
  buffer: 32 * 1024,
  flush_interval: 1,
  redact: {
    headers: ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'mcp-session-id', 'x-api-key'],
    query_params: ['token', 'key', 'secret', 'pass', 'pwd', 'auth', 'session', 'signature', 'sig', 'code', 'credential', 'jwt', 'bearer', 'refresh', 'otp', 'assertion', 'ticket'],
    paths: [],
  },
}

export interface LoggerOptions {
  /** Fields on every line (`pid`, a `role`). */
  base?: Record<string, unknown>
  /** A file descriptor or file path (default: 1, stdout). */
  dest?: number | string
  /** Write each line at once, whatever `buffer` says (stdio's stderr). */
  sync?: boolean
  /** Only this process writes to `dest` (not a cluster's worker or primary): a write may exceed PIPE_BUF. */
  exclusive?: boolean
}

/** The gateway's logger for `config` (only `level` is required; the rest default as in schema.json). */
export function createLogger(config: Pick<LogConfig, 'level'> & Partial<LogConfig>, options: LoggerOptions = {}): Logger {
  const settings = { ...DEFAULTS, ...config }
  const redact = { ...DEFAULTS.redact, ...config.redact }
  const buffered = options.sync !== true && settings.buffer > 0
  const dest = options.dest ?? 1
  const destination: DestinationStream = buffered
    ? new LineBuffer(typeof dest === 'number' ? dest : openSync(dest, 'a'), settings.buffer, settings.flush_interval * 1000, options.exclusive === true)
    : pino.destination({ dest, sync: true })
  const names = redact.query_params.map((name) => name.toLowerCase())
  const paths = redactPaths(redact)
  const logger = pino(
    {
      level: settings.level,
      base: { pid: process.pid, ...options.base },
      ...(paths.length > 0 ? { redact: { paths, censor: CENSOR } } : {}),
      serializers: { ...CAPPED_FIELDS, sessionId: sessionHash, url: (url: unknown) => capField(redactUrl(url, names), LOG_URL_MAX) },
    },
    destination,
  )
  // Only the built-in header paths: they name `headers` objects, never an access line's fields.
  if (redact.paths.length === 0) markPlainAccessLine(logger)
  return logger
}

/** How long a flush may take before the stop goes on without it (a stuck pipe must not hang a drain). */
const FLUSH_TIMEOUT_MS = 2000

/** Writes out what the logger holds; resolves once it is written (or could not be). */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_TIMEOUT_MS)
    timer.unref()
    try {
      // The callback gets fsync's error on a pipe (EINVAL) once the data is written: written is enough.
      logger.flush(() => {
        clearTimeout(timer)
        resolve()
      })
    } catch {
      clearTimeout(timer)
      resolve()
    }
  })
}
