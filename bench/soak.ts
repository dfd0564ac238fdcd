/**
 * The soak (`npm run bench -- --soak <seconds>`, issue 16's resilience suite): one mcp-edge process
 * (memory store, one route, log level info) under mixed traffic for that long — sessions created and
 * deleted, tool calls, calls answered as SSE with progress, GET streams opened and cut — with its
 * memory read after forced full GCs every few seconds. After a warm-up, a least-squares line through
 * the samples gives the RSS and heap slopes; a process that keeps nothing per request has both ~0.
 *
 *   16 clients ─► pick an action (call 60 %, progress call 15 %, new session 10 %, DELETE 10 %,
 *                 GET stream held 0.5–2 s 5 %) ─► every answer checked
 *   every 5 s ─► measure(): process.memoryUsage() after full GCs ─► samples after the warm-up
 *   ─► slopes (bytes per minute) ─► targets in report.ts
 */
import http from 'node:http'
import { McpHttp } from './mcp-http.ts'
import { startServer } from './servers.ts'

/** What the soak measured. */
export interface Soak {
  seconds: number
  warmupS: number
  /** Requests answered, by kind, and the ones that failed (each checked). */
  calls: number
  progressCalls: number
  sessionsCreated: number
  sessionsDeleted: number
  streams: number
  errors: number
  /** The first failure, when there were some. */
  sample?: string
  /** Samples after the warm-up: seconds since the start, RSS, heap used and memory outside the heap (buffers) after full GCs, in bytes. */
  samples: Array<{ t: number; rss: number; heapUsed: number; external: number }>
  /** Least-squares slopes over the samples, bytes per minute. */
  rssSlopeBPerMin: number
  heapSlopeBPerMin: number
}

const CLIENTS = 16
const MAX_SESSIONS = 60
const SAMPLE_EVERY_MS = 5000

/** The slope (per second of `x`) of the least-squares line through the points. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length
  if (n < 2) return 0
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n
  let num = 0
  let den = 0
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY)
    den += (x - meanX) ** 2
  }
  return den === 0 ? 0 : num / den
}

/** Opens a GET stream on `sessionId`, holds it `ms`, then cuts it; resolves with its status. */
function holdStream(url: string, sessionId: string, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } }, (response) => {
      response.resume()
      if (response.statusCode !== 200) {
        response.on('end', () => resolve(response.statusCode ?? 0))
        return
      }
      setTimeout(() => {
        request.destroy()
        resolve(200)
      }, ms)
    })
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)))
  })
}

/** Runs the soak for `seconds`; `log` gets a line per sample. */
export async function runSoak(seconds: number, log: (line: string) => void): Promise<Soak> {
  // V8 and the allocator settle for a while under a new load: a quarter of the run, 30 s to 2 min.
  const warmupS = Math.min(120, Math.max(30, Math.round(seconds / 4)))
  const server = await startServer({ kind: 'edge', route: { max_sessions: 100_000 } }, { gc: true })
  const client = new McpHttp(server.url, CLIENTS * 2)
  const soak: Soak = { seconds, warmupS, calls: 0, progressCalls: 0, sessionsCreated: 0, sessionsDeleted: 0, streams: 0, errors: 0, samples: [], rssSlopeBPerMin: 0, heapSlopeBPerMin: 0 }
  const live: string[] = []
  const fail = (error: unknown): void => {
    soak.errors++
    soak.sample ??= (error as Error).message
  }
  const started = performance.now()
  const end = started + seconds * 1000
  try {
    for (let n = 0; n < 20; n++) live.push(await client.initialize())
    soak.sessionsCreated = live.length

    const act = async (): Promise<void> => {
      const pick = Math.random()
      const sessionId = live[Math.floor(Math.random() * live.length)]
      if (pick < 0.1 || sessionId === undefined) {
        if (live.length >= MAX_SESSIONS) return
        live.push(await client.initialize())
        soak.sessionsCreated++
      } else if (pick < 0.2) {
        if (live.length <= 5) return
        live.splice(live.indexOf(sessionId), 1)
        const answer = await new Promise<number>((resolve, reject) => {
          const request = http.request(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } }, (response) => {
            response.resume()
            response.on('end', () => resolve(response.statusCode ?? 0))
          })
          request.on('error', reject)
          request.end()
        })
        if (answer !== 200) throw new Error(`DELETE answered ${answer}`)
        soak.sessionsDeleted++
      } else if (pick < 0.25) {
        const status = await holdStream(server.url, sessionId, 500 + Math.random() * 1500)
        // 409: the session already has its GET stream (another client holds it); 404: deleted meanwhile.
        if (status !== 200 && status !== 409 && status !== 404) throw new Error(`GET stream answered ${status}`)
        soak.streams++
      } else if (pick < 0.4) {
        const text = await client.callTool('echo_progress', { message: 'soak' }, sessionId).catch((error: Error) => (/HTTP 404/.test(error.message) ? 'echo: soak' : Promise.reject(error)))
        if (text !== 'echo: soak') throw new Error(`echo_progress answered ${text}`)
        soak.progressCalls++
      } else {
        const text = await client.callTool('echo', { message: 'soak' }, sessionId).catch((error: Error) => (/HTTP 404/.test(error.message) ? 'echo: soak' : Promise.reject(error)))
        if (text !== 'echo: soak') throw new Error(`echo answered ${text}`)
        soak.calls++
      }
    }
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) await act().catch(fail)
    })

    const sampler = (async () => {
      for (let next = started + SAMPLE_EVERY_MS; next < end; next += SAMPLE_EVERY_MS) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())))
        const memory = await server.measure()
        const t = (performance.now() - started) / 1000
        log(`  ${t.toFixed(0).padStart(4)} s  rss ${(memory.rss / 2 ** 20).toFixed(1)} MiB  heap ${(memory.heapUsed / 2 ** 20).toFixed(1)} MiB  external ${(memory.external / 2 ** 20).toFixed(1)} MiB  ${soak.calls + soak.progressCalls} calls, ${live.length} sessions, ${soak.errors} errors`)
        if (t >= warmupS) soak.samples.push({ t, rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external })
      }
    })()
    await Promise.all([...clients, sampler])
  } finally {
    client.close()
    await server.stop()
  }
  soak.rssSlopeBPerMin = slope(soak.samples.map(({ t, rss }) => [t, rss])) * 60
  soak.heapSlopeBPerMin = slope(soak.samples.map(({ t, heapUsed }) => [t, heapUsed])) * 60
  return soak
}

/** The soak in a few lines, for the terminal. */
export function formatSoak(soak: Soak): string {
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB/min`
  const requests = soak.calls + soak.progressCalls
  return [
    `soak: ${soak.seconds} s (${soak.warmupS} s warm-up), ${requests} calls (${Math.round(requests / soak.seconds)}/s; ${soak.progressCalls} with progress), ` +
      `${soak.sessionsCreated} sessions created, ${soak.sessionsDeleted} deleted, ${soak.streams} GET streams, ${soak.errors} errors${soak.sample === undefined ? '' : ` (first: ${soak.sample})`}`,
    `  slopes over ${soak.samples.length} samples after the warm-up: RSS ${kib(soak.rssSlopeBPerMin)}, heap ${kib(soak.heapSlopeBPerMin)}`,
  ].join('\n')
}
