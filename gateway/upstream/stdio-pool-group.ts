/**
 * A stdio pool's groups: the children that serve one isolation unit (every session in `shared`, a
 * principal's in `principal`, one session's in `session`), how a session finds its group, what a
 * group's children are told in their handshake, and the restart backoff after a failure.
 */
import type { Implementation, JsonObject } from '../wire/mcp-types.ts'
import { LATEST_STATEFUL_VERSION } from '../wire/versions.ts'
import type { PoolChild } from './stdio-pool-child.ts'
import type { StdioUpstreamConfig } from './stdio-pool-config.ts'
import type { StdioPoolTransport } from './stdio-pool-transport.ts'
import { unitFolder } from './stdio-pool-state.ts'

/** Restart backoff: the wait after the n-th failure in a row is min(initialMs × 2^(n-1), maxMs). */
export interface StdioBackoff {
  initialMs: number
  maxMs: number
  /** A child that ran this long before it failed starts the count again. */
  resetMs: number
}

/** The children of one isolation unit and their restart state. */
export interface Group {
  key: string
  capacity: number
  children: PoolChild[]
  sessions: Set<StdioPoolTransport>
  /** The handshake its children make; a session's own in `session` isolation. */
  handshake: JsonObject | undefined
  failures: number
  retryAt: number
  restartTimer?: NodeJS.Timeout
  /** Crashed children that served sessions, to be replaced when the backoff allows. */
  replacements: number
  /** The unit's own folder, with `state_dir` (stdio-pool-state.ts). */
  stateFolder?: string
}

/** 100 ms doubling to 10 s, reset after 10 s of good run. */
export const DEFAULT_BACKOFF: StdioBackoff = { initialMs: 100, maxMs: 10_000, resetMs: 10_000 }

/**
 * What a shared child is told about its client: every capability a session may have, because a
 * server→client request is only passed to a session whose own client declared the capability.
 */
const SHARED_CAPABILITIES: JsonObject = { sampling: {}, elicitation: { form: {}, url: {} } }

/**
 * A shared (or per-principal) child is never given a user's roots: one session's roots would become
 * every session's sandbox. It declares roots only when the upstream configures `roots`, and the pool
 * answers its roots/list with those (stdio-pool-child.ts).
 */
function sharedCapabilities(config: StdioUpstreamConfig): JsonObject {
  return config.roots === undefined ? SHARED_CAPABILITIES : { ...SHARED_CAPABILITIES, roots: {} }
}

/** A group with no child yet: `shared`'s holds up to pool.max children, the others one. */
export function newGroup(key: string, config: StdioUpstreamConfig): Group {
  const capacity = key === '*' ? config.pool.max : 1
  const group: Group = { key, capacity, children: [], sessions: new Set(), handshake: undefined, failures: 0, retryAt: 0, replacements: 0 }
  if (config.stateDir !== undefined && key !== '*') group.stateFolder = unitFolder(config.stateDir, key)
  return group
}

/** The key of `session`'s group under `isolation`. */
export function groupKey(isolation: StdioUpstreamConfig['isolation'], session: StdioPoolTransport, next: () => number): string {
  switch (isolation) {
    case 'shared':
      return '*'
    case 'principal':
      return `p:${session.key.principal ?? ''}`
    case 'session':
      return `s:${sessionSerial(session, next)}`
  }
}

/** The initialize a shared (or per-principal) child is sent. */
export function sharedHandshake(config: StdioUpstreamConfig, clientInfo: Implementation): JsonObject {
  return { protocolVersion: LATEST_STATEFUL_VERSION, capabilities: sharedCapabilities(config), clientInfo: clientInfo as unknown as JsonObject }
}

/** A child of `group` failed: counts it and sets when the next may start; the milliseconds to wait. */
export function failed(group: Group, readySince: number, backoff: StdioBackoff): number {
  const now = Date.now()
  if (readySince > 0 && now - readySince >= backoff.resetMs) group.failures = 0
  group.failures++
  const waitMs = Math.min(backoff.initialMs * 2 ** (group.failures - 1), backoff.maxMs)
  group.retryAt = now + waitMs
  return waitMs
}

export /** The child with the fewest sessions (of those in `state`, when given). */
function leastLoaded(children: readonly PoolChild[], state: PoolChild['state'] | undefined): PoolChild | undefined {
  let least: PoolChild | undefined
  for (const child of children) if ((state === undefined || child.state === state) && (least === undefined || child.sessions.size < least.sessions.size)) least = child
  return least
}

const serials = new WeakMap<StdioPoolTransport, number>()

/** `session` isolation: a group per transport, named by a number it keeps for life. */
function sessionSerial(session: StdioPoolTransport, next: () => number): number {
  let serial = serials.get(session)
  if (serial === undefined) serials.set(session, (serial = next()))
  return serial
}
