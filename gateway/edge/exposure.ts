/**
 * The one warning `mcp-edge start` gives about exposure: routes without access control on an address
 * other machines can reach. Anyone who reaches such a port can call every tool of those routes.
 */
import type { GatewayConfig } from '../config/types.ts'

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/

/** True for an address only this machine reaches. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host)
}

/** The warning to log once at start, or undefined when every route is protected or the gateway is local. */
export function openRouteWarning(config: GatewayConfig): { message: string; host: string; routes: string[] } | undefined {
  if (isLoopback(config.listen.host)) return undefined
  const open = config.routes.filter((route) => route.auth === undefined).map((route) => route.location)
  if (open.length === 0) return undefined
  return {
    host: config.listen.host,
    routes: open,
    message: `routes without auth listen on ${config.listen.host}: anyone who reaches this port can call their tools (add auth, or listen on 127.0.0.1)`,
  }
}
