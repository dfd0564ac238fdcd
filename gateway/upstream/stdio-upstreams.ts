/**
 * The proxy's stdio upstreams on this worker: one StdioPool per upstream (gateway/upstream/stdio-pool.ts),
 * each giving a downstream session a Transport that behaves like a dedicated connection. A stateless
 * request's pooled link counts as one session per principal and capabilities.
 */
import type { Logger } from 'pino'
import type { Transport } from '../client/transport.ts'
import type { UpstreamConfig } from '../config/types.ts'
import type { StdioKey, StdioTransports } from './connect.ts'
import { StdioPool } from './stdio-pool.ts'
import { resolveStdioUpstream } from './stdio-pool-config.ts'

/** Pools for the stdio upstreams among `upstreams`, or undefined when there are none; throws on a bad command or pool. */
export function stdioUpstreams(upstreams: readonly UpstreamConfig[], logger: Logger): StdioTransports | undefined {
  const pools = new Map<string, StdioPool>()
  for (const upstream of upstreams) {
    if (upstream.command === undefined) continue
    const { name, command, env, cwd, isolation, pool, max_message_size: maxMessageSize } = upstream
    const config = resolveStdioUpstream({ name, command, env, isolation, pool, max_message_size: maxMessageSize }, cwd ?? process.cwd())
    pools.set(name, new StdioPool(config, { log: logger }))
  }
  if (pools.size === 0) return undefined
  return {
    transport(upstream: UpstreamConfig, key: StdioKey): Transport {
      const pool = pools.get(upstream.name)
      if (pool === undefined) throw new Error(`upstream ${upstream.name} is not a stdio upstream`)
      return pool.transportFor({ session: key.session ?? `stateless:${key.principal ?? ''}`, principal: key.principal })
    },
    async close(): Promise<void> {
      await Promise.all([...pools.values()].map((pool) => pool.close()))
    },
  }
}
