/**
 * A stdio upstream as configured (`command`, `env`, `cwd`, `isolation`, `pool`) and the normalised
 * form the pool runs: the command split into argv like a shell would split it (without a shell),
 * paths resolved against the config file's folder, every limit filled with its default.
 */
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * Who shares a child: `shared` (every session of the route, spread over up to `pool.max`
 * children), `session` (a child per downstream session), `principal` (a child per principal).
 */
export type StdioIsolation = 'shared' | 'session' | 'principal'

/** Limits of one upstream's children on one worker; durations in seconds. */
export interface StdioPoolLimits {
  /** Children kept running when idle (`shared` only). */
  min: number
  /** Children running at once for this upstream on this worker. */
  max: number
  /** Seconds without a message from a session or an answer to one (and nothing in flight) before a child is stopped. */
  idle_timeout: number
  /** Seconds between pings to a running child; 0 switches pings off. */
  ping_interval: number
  /** Seconds a ping (and a write to stdin) may take before the child counts as hung and is replaced. */
  ping_timeout: number
  /** Seconds a new child has to answer `initialize`. */
  start_timeout: number
}

/** The upstream as the pool runs it. */
export interface StdioUpstreamConfig {
  /** The upstream's name: the label of its log lines. */
  name: string
  /** argv: the program (absolute when it was given as a path) and its arguments. */
  command: string[]
  /** The child's whole environment: a few harmless variables of the gateway's (see SAFE_ENV) plus `env`. */
  env: Record<string, string>
  cwd: string
  isolation: StdioIsolation
  pool: StdioPoolLimits
  /** Largest line the child may write to stdout, in bytes; a longer one is dropped and logged. */
  max_message_size: number
  /**
   * The roots a `shared` or `principal` child is told (its roots/list is answered with these, never
   * with a user's); undefined: such a child is told of no roots capability at all.
   */
  roots?: Array<{ uri: string; name?: string }>
  /**
   * `principal` and `session` only: the folder under which each principal's (or session's) child
   * gets a folder of its own, what `{state_dir}` in `command` and `env` stands for (stdio-pool-state.ts).
   */
  stateDir?: string
}

/** The upstream as written in the config (after `${VAR}` interpolation). */
export interface StdioUpstreamInput {
  name: string
  command: string | string[]
  env?: Record<string, string>
  cwd?: string
  isolation?: StdioIsolation
  pool?: Partial<StdioPoolLimits>
  max_message_size?: number
  /** Folders (or `file://` URIs) a shared child's roots/list is answered with; relative paths from `cwd`. */
  roots?: string[]
  /** A folder of per-principal (or per-session) folders, relative to the config file's folder. */
  state_dir?: string
}

/** Defaults of `pool`; `max` depends on the isolation. */
export const STDIO_POOL_DEFAULTS = {
  min: 0,
  maxShared: 4,
  maxPerKey: 16,
  idle_timeout: 300,
  ping_interval: 30,
  ping_timeout: 10,
  start_timeout: 30,
  max_message_size: 4 * 1024 * 1024,
} as const

/**
 * The gateway's variables a child inherits; everything else (tokens, keys, store URLs) stays in the
 * gateway. Pass what a server needs through `env`, e.g. `env: { API_KEY: "${API_KEY}" }`.
 */
export const SAFE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'SYSTEMROOT'] as const

/**
 * JSON Schema of one stdio upstream, for the proxy's config schema (defaults are applied by
 * `resolveStdioUpstream`, because `max` depends on `isolation`).
 */
export const STDIO_UPSTREAM_SCHEMA = {
  type: 'object',
  required: ['name', 'command'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9-]{1,24}$' },
    command: {
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, items: { type: 'string' } },
      ],
    },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    cwd: { type: 'string', minLength: 1 },
    isolation: { enum: ['shared', 'session', 'principal'] },
    pool: {
      type: 'object',
      additionalProperties: false,
      properties: {
        min: { type: 'integer', minimum: 0 },
        max: { type: 'integer', minimum: 1, maximum: 1024 },
        idle_timeout: { type: 'number', exclusiveMinimum: 0 },
        ping_interval: { type: 'number', minimum: 0 },
        ping_timeout: { type: 'number', exclusiveMinimum: 0 },
        start_timeout: { type: 'number', exclusiveMinimum: 0 },
      },
    },
    max_message_size: { type: 'integer', minimum: 1024 },
    roots: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1 } },
    state_dir: { type: 'string', minLength: 1 },
  },
} as const

/** Fills defaults, splits a string command, resolves paths against `baseDir`; throws an Error that names the problem. */
export function resolveStdioUpstream(input: StdioUpstreamInput, baseDir: string): StdioUpstreamConfig {
  const argv = typeof input.command === 'string' ? splitCommand(input.command) : [...input.command]
  if (argv.length === 0 || argv[0] === '') throw new Error(`upstream ${input.name}: command is empty`)
  const cwd = input.cwd === undefined ? baseDir : resolve(baseDir, input.cwd)
  const program = argv[0]!
  // `node` is the gateway's own Node, so a server from node_modules runs on the version the gateway runs on.
  if (program === 'node') argv[0] = process.execPath
  else if (program.includes('/') && !isAbsolute(program)) argv[0] = resolve(cwd, program)

  const isolation = input.isolation ?? 'shared'
  const given = input.pool ?? {}
  const pool: StdioPoolLimits = {
    min: given.min ?? STDIO_POOL_DEFAULTS.min,
    max: given.max ?? (isolation === 'shared' ? STDIO_POOL_DEFAULTS.maxShared : STDIO_POOL_DEFAULTS.maxPerKey),
    idle_timeout: given.idle_timeout ?? STDIO_POOL_DEFAULTS.idle_timeout,
    ping_interval: given.ping_interval ?? STDIO_POOL_DEFAULTS.ping_interval,
    ping_timeout: given.ping_timeout ?? STDIO_POOL_DEFAULTS.ping_timeout,
    start_timeout: given.start_timeout ?? STDIO_POOL_DEFAULTS.start_timeout,
  }
  if (pool.min > pool.max) throw new Error(`upstream ${input.name}: pool.min (${pool.min}) is above pool.max (${pool.max})`)
  if (pool.min > 0 && isolation !== 'shared') throw new Error(`upstream ${input.name}: pool.min applies to isolation: shared only`)

  const env: Record<string, string> = {}
  for (const name of SAFE_ENV) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  Object.assign(env, input.env)
  const config: StdioUpstreamConfig = { name: input.name, command: argv, env, cwd, isolation, pool, max_message_size: input.max_message_size ?? STDIO_POOL_DEFAULTS.max_message_size }
  if (input.roots !== undefined) config.roots = input.roots.map((root) => rootOf(root, cwd))
  if (input.state_dir !== undefined) {
    if (isolation === 'shared') throw new Error(`upstream ${input.name}: state_dir needs isolation: principal or session (a shared child is one unit for everyone)`)
    config.stateDir = resolve(baseDir, input.state_dir)
  } else if ([...argv, ...Object.values(input.env ?? {})].some((word) => word.includes(STATE_DIR_TOKEN))) {
    throw new Error(`upstream ${input.name}: ${STATE_DIR_TOKEN} is used but state_dir is not set`)
  }
  return config
}

/** What stands for a unit's own folder in `command` and `env` (stdio-pool-state.ts). */
export const STATE_DIR_TOKEN = '{state_dir}'

/** A configured root as roots/list gives it: `file://` URIs as they are, a path made one (resolved against `cwd`). */
function rootOf(root: string, cwd: string): { uri: string; name?: string } {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(root)) return { uri: root }
  const path = resolve(cwd, root)
  return { uri: pathToFileURL(path).href, name: path }
}

const OPERATORS = new Set(['|', '&', ';', '<', '>', '(', ')', '`', '$'])

/**
 * Splits a command line into argv the way a POSIX shell splits words: blanks separate, '…' is
 * literal, "…" keeps blanks (backslash escapes " \ $ `), a backslash outside quotes escapes the next
 * character. Nothing is expanded and nothing runs through a shell, so shell syntax outside quotes
 * (pipes, redirections, `$`, `;`) is an error rather than a surprise.
 */
export function splitCommand(line: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      continue
    }
    inWord = true
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end === -1) throw new Error(`command: unterminated ' in ${JSON.stringify(line)}`)
      word += line.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      i++
      for (; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) i++
        word += line[i]
      }
      if (i >= line.length) throw new Error(`command: unterminated " in ${JSON.stringify(line)}`)
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error(`command: a trailing \\ in ${JSON.stringify(line)}`)
      word += line[++i]
    } else if (OPERATORS.has(c)) {
      throw new Error(`command: ${JSON.stringify(c)} is shell syntax and no shell runs the command; quote it, or write the command as an array`)
    } else {
      word += c
    }
  }
  if (inWord) words.push(word)
  return words
}
