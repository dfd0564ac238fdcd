/**
 * Which era a POST speaks, and the checks of the 2026-07-28 (stateless) envelope, in the order the
 * spec and the conformance fixture give them. A request with a session id or a legacy handshake is
 * stateful; one with a `_meta` envelope or a newer version header is stateless.
 */
import { EdgeError } from '../../wire/errors.ts'
import type { ClientCapabilities, Implementation, JsonObject, LogLevel } from '../../wire/mcp-types.ts'
import { LOG_LEVELS } from '../../wire/mcp-types.ts'
import { STATEFUL_VERSIONS } from '../../wire/versions.ts'

export const STATELESS_VERSIONS = ['2026-07-28'] as const
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion'
export const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities'
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo'
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel'
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo'

const legacy: ReadonlySet<string> = new Set(STATEFUL_VERSIONS)
const stateless: ReadonlySet<string> = new Set(STATELESS_VERSIONS)
const levels: ReadonlySet<string> = new Set(LOG_LEVELS)

/** What a stateless request declares about its client, read from `params._meta`. */
export interface Envelope {
  readonly protocolVersion: string
  readonly clientCapabilities: ClientCapabilities
  readonly clientInfo: Implementation | undefined
  /** undefined: the client asked for no log messages. */
  readonly logLevel: LogLevel | undefined
}

/** True when a POST without a session id is on the stateless wire. */
export function isStateless(body: unknown, versionHeader: string | undefined): boolean {
  if (versionHeader !== undefined && !legacy.has(versionHeader)) return true
  if (typeof body !== 'object' || body === null) return false
  const params = (body as JsonObject).params
  return typeof params === 'object' && params !== null && typeof (params as JsonObject)._meta === 'object' && (params as JsonObject)._meta !== null
}

/** Checks the version header against the envelope; returns the envelope or throws the EdgeError that refuses the request. */
export function readEnvelope(params: JsonObject | undefined, versionHeader: string | undefined): Envelope {
  const rawMeta = params?._meta
  const hasMeta = typeof rawMeta === 'object' && rawMeta !== null
  const meta = (hasMeta ? rawMeta : {}) as JsonObject
  if (hasMeta && versionHeader === undefined) {
    throw new EdgeError('MCP_EDGE_HEADER_MISMATCH', 'Header mismatch: MCP-Protocol-Version header is required')
  }
  const version = hasMeta ? meta[META_VERSION] : undefined
  const capabilities = hasMeta ? meta[META_CAPABILITIES] : undefined
  if (typeof version !== 'string' || typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) {
    throw new EdgeError('MCP_EDGE_INVALID_PARAMS', `Invalid params: _meta needs "${META_VERSION}" (a string) and "${META_CAPABILITIES}" (an object)`)
  }
  if (versionHeader !== version) {
    throw new EdgeError('MCP_EDGE_HEADER_MISMATCH', `Header mismatch: MCP-Protocol-Version ${versionHeader} differs from _meta ${version}`)
  }
  if (!stateless.has(version)) {
    throw new EdgeError('MCP_EDGE_UNSUPPORTED_VERSION', `Unsupported protocol version ${version}`, {
      data: { supported: [...STATELESS_VERSIONS], requested: version },
    })
  }
  const logLevel = meta[META_LOG_LEVEL]
  if (logLevel !== undefined && (typeof logLevel !== 'string' || !levels.has(logLevel))) {
    throw new EdgeError('MCP_EDGE_INVALID_PARAMS', `Invalid params: ${META_LOG_LEVEL} must be one of ${LOG_LEVELS.join(', ')}`)
  }
  return {
    protocolVersion: version,
    clientCapabilities: capabilities as ClientCapabilities,
    clientInfo: meta[META_CLIENT_INFO] as Implementation | undefined,
    logLevel: logLevel as LogLevel | undefined,
  }
}
