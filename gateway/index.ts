/**
 * The public API for handler authors: `import { defineHandler } from 'mcp-edge'`.
 *
 *   export default defineHandler((mcp, server) => {
 *     server.register(mcp.tool('echo', ({ message }) => `Tool echo: ${message}`, { inputSchema: … }))
 *   })
 */
import type { ComponentFactory } from './registry/components.ts'
import type { RouteServer } from './protocol/route-server-api.ts'

export type HandlerSetup = (mcp: ComponentFactory, server: RouteServer) => void | Promise<void>

const HANDLER = Symbol.for('mcp-edge.handler')

/** A handler module's default export. */
export interface Handler {
  readonly [HANDLER]: true
  readonly setup: HandlerSetup
}

/** Wraps a handler module's setup function; the gateway calls it once per route and worker at start. */
export function defineHandler(setup: HandlerSetup): Handler {
  return { [HANDLER]: true, setup }
}

/** True for a value made by `defineHandler` (the loader checks a module's default export with it). */
export function isHandler(value: unknown): value is Handler {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[HANDLER] === true
}

export { mcp, ToolError } from './registry/components.ts'
export type * from './registry/components.ts'
export type * from './protocol/context.ts'
export type * from './protocol/route-server-api.ts'
export type * from './protocol/mcp-types.ts'
export { LOG_LEVELS } from './protocol/mcp-types.ts'
export { McpError, RpcCode } from './errors.ts'
