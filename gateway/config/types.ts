/**
 * The validated, defaulted configuration. `load.ts` turns a YAML file into this; everything after
 * it trusts these shapes. Durations are in seconds as in the YAML; paths are absolute.
 */
import type { Icon, JsonObject } from '../protocol/mcp-types.ts'

export type TransportName = 'streamable_http' | 'websocket'

export interface CapabilitiesConfig {
  logging: boolean
  completions: boolean
  prompts: { list_changed: boolean } | false
  resources: { subscribe: boolean; list_changed: boolean } | false
  tools: { list_changed: boolean } | false
}

export interface RouteConfig {
  /** URL path, starting with `/`. Unique across routes. */
  location: string
  /** Absolute path of the handler module (resolved against the config file's folder). */
  handler: string
  transports: TransportName[]
  server: {
    name: string
    version: string
    title?: string
    description?: string
    website_url?: string
    icons?: Icon[]
    instructions?: string
  }
  capabilities: CapabilitiesConfig
  /** Page sizes per list; 0 switches pagination off. */
  pagination: { tools: number; prompts: number; resources: number }
  resumability: boolean
  /** Seconds without a request before a session ends. */
  longest_standby: number
  /** Seconds to wait for a client's answer to a server→client request. */
  read_timeout: number
  /** Allowed Origin/Host values (`http://host:port`, `host:port` or `host`); loopback only when empty. */
  allowed_origins: string[]
  max_sessions: number
  /** Anything the handler wants from the config; reaches it as `server.options`. */
  options: JsonObject
}

export interface MemoryStoreConfig { type: 'memory'; event_capacity: number; cache_ttl: number }
export type StoreConfig = MemoryStoreConfig

export interface GatewayConfig {
  /** Absolute path of the file this was loaded from (`<embedded>` for a config built in code). */
  file: string
  listen: { host: string; port: number }
  workers: number | 'auto'
  store: StoreConfig
  /** Largest accepted request body, in bytes. */
  body_limit: number
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' }
  routes: RouteConfig[]
}
