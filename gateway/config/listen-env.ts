/**
 * `PORT` and `HOST` from the environment override the config's `listen` (containers and PaaS set
 * them). A bad value names its variable, not the server option it would have become.
 */
import type { GatewayConfig } from './types.ts'

/** Applies `PORT` and `HOST` to `config.listen`; returns the problem when `PORT` is not a port number. */
export function applyListenEnv(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const port = env.PORT
  if (port !== undefined && port !== '') {
    const value = Number(port)
    if (!/^\d+$/.test(port.trim()) || value > 65535) return `PORT must be a port number from 0 to 65535 (found ${JSON.stringify(port)})`
    config.listen.port = value
  }
  if (env.HOST !== undefined && env.HOST !== '') config.listen.host = env.HOST
  return undefined
}
