/**
 * What sessions and requests cost mcp-edge (memory store), read inside the server after forced full
 * GCs (the server runs with --expose-gc; servers/probe.mjs answers the runner over IPC):
 *
 *   warm up (500 sessions) ─► measure ─► create N sessions over HTTP (timed) ─► measure
 *     → RSS and heap per idle session, time to create N sessions
 *   1 session: 10,000 warm-up calls ─► measure ─► (M/5 tools/call ─► measure) × 5
 *     → heap retained per request: the least-squares slope of heapUsed over requests (≈0 unless
 *       something leaks per request; a slope over several readings is steadier than one difference,
 *       as each reading moves by ±200 KB with what V8 happens to keep)
 *
 * Sessions are created over real HTTP by the runner (50 keep-alive connections on the load core):
 * initialize + notifications/initialized each, so the creation time includes both round trips.
 */
import { McpHttp, pool } from './mcp-http.ts'
import { startRedis } from './redis.ts'
import { REDIS_PREFIX } from './scenarios.ts'
import { startServer } from './servers.ts'

export interface Costs {
  sessions: number
  /** Time to create `sessions` sessions (initialize + initialized), 50 at a time. */
  createMs: number
  rssPerSessionB: number
  heapPerSessionB: number
  requests: number
  retainedHeapPerRequestB: number
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0)
  return sxy / sxx
}

export async function measureCosts(sessions: number, requests: number): Promise<Costs> {
  // One client opens every session: sessions_per_principal (100 by default) would refuse the rest.
  const server = await startServer({ kind: 'edge', route: { limits: { sessions_per_principal: 0 } } }, { gc: true })
  const client = new McpHttp(server.url, 50)
  try {
    await pool(500, 50, () => client.initialize())
    const before = await server.measure()
    const started = performance.now()
    await pool(sessions, 50, () => client.initialize())
    const createMs = performance.now() - started
    const after = await server.measure()

    const sessionId = await client.initialize()
    let seq = 0
    const call = async (): Promise<void> => {
      const message = `m${++seq}`
      const text = await client.callTool('echo', { message }, sessionId)
      if (text !== `echo: ${message}`) throw new Error(`echo answered ${text} to ${message}`)
    }
    await pool(10_000, 50, call)
    const readings: Array<[number, number]> = [[0, (await server.measure()).heapUsed]]
    const block = Math.ceil(requests / 5)
    for (let done = block; done <= block * 5; done += block) {
      await pool(block, 50, call)
      readings.push([done, (await server.measure()).heapUsed])
    }

    return {
      sessions,
      createMs,
      rssPerSessionB: (after.rss - before.rss) / sessions,
      heapPerSessionB: (after.heapUsed - before.heapUsed) / sessions,
      requests: block * 5,
      retainedHeapPerRequestB: slope(readings),
    }
  } finally {
    client.close()
    await server.stop()
  }
}

export interface RedisCost {
  sessions: number
  /** Growth of Redis's used_memory per idle session. */
  bytesPerSession: number
}

/** Bytes an idle session costs in Redis: used_memory before and after creating `sessions` sessions. */
export async function measureRedisCost(sessions: number): Promise<RedisCost> {
  const redis = await startRedis()
  try {
    const server = await startServer({ kind: 'edge', store: { type: 'redis', url: redis.url, key_prefix: REDIS_PREFIX }, route: { limits: { sessions_per_principal: 0 } } })
    const client = new McpHttp(server.url, 50)
    try {
      await pool(100, 50, () => client.initialize())
      const before = await redis.usedMemory()
      await pool(sessions, 50, () => client.initialize())
      const after = await redis.usedMemory()
      return { sessions, bytesPerSession: (after - before) / sessions }
    } finally {
      client.close()
      await server.stop()
    }
  } finally {
    await redis.stop()
  }
}
