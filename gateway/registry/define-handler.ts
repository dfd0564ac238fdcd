/**
 * What a handler module exports: `export default defineHandler((mcp, server) => { … })`. The setup
 * sees the component factory and its route's server, nothing of the gateway behind them.
 */
import type { ComponentFactory } from './components.ts'
import type { RouteServer } from './route-server-api.ts'

/** A handler module's setup: registers components on its route's `server`, once per route and worker. */
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
