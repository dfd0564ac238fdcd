/**
 * The soak (`npm run bench -- --soak <seconds>`, issue 16's resilience suite): one mcp-edge process
 * (memory store, one route, log level info) under mixed traffic for that long — sessions created and
 * deleted, tool calls, calls answered as SSE with progress, GET streams opened and cut — with its
 * memory read after forced full GCs every few seconds. After a warm-up, a least-squares line through
 * the samples gives the RSS and heap slopes; a process that keeps nothing per request has both ~0.
 *
 * The young generation is pinned at its smallest size (two semi-spaces of 1 MiB). V8 otherwise sizes
 * it to the allocation rate (up to 2 × 16 MiB) and gives it back whenever the process idles a few
 * seconds (a busy machine stalls the clients), then takes it back in steps as the traffic resumes: RSS
 * moves by up to 30 MiB with no object kept, which is what failed the first 600 s soak (2.3 MiB/min
 * with a flat heap). After full GCs the young generation holds nothing (what survives is promoted), so
 * pinning it hides no leak: old space, code, malloc and buffers stay measured, and an idle spell moves
 * RSS by 2 MiB at most. bench/README.md has the data.
 *
 *   16 clients ─► pick an action (call 60 %, progress call 15 %, new session 10 %, DELETE 10 %,
 *                 GET stream held 0.5–2 s 5 %) ─► every answer checked
 *   every 5 s ─► measure(): process.memoryUsage() and V8's spaces after full GCs, /proc status
 *   ─► samples after the warm-up ─► slopes (bytes per minute) ─► targets in report.ts
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { McpHttp } from './mcp-http.ts'
import { startServer, type Memory } from './servers.ts'

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
  /** Every sample (the warm-up's too), after full GCs, in bytes; see `SoakSample`. */
  samples: SoakSample[]
  /** Each semi-space's fixed size, MiB; undefined when V8 sized the young generation itself (BENCH_SOAK_YOUNG=auto). */
  semiSpaceMiB?: number
  /** Least-squares slopes over the samples after the warm-up, bytes per minute: RSS and heapUsed (the targets), and every other field of a sample. */
  rssSlopeBPerMin: number
  heapSlopeBPerMin: number
  slopes: Partial<Record<SampleField, number>>
}

type SampleField = Exclude<keyof SoakSample, 't' | 'sessions'>

/**
 * One reading of the server's memory after forced full GCs: seconds since the start; process.memoryUsage()
 * (rss; heapTotal: the V8 heap's committed pages, heapUsed: what live objects take of them; external:
 * memory V8 objects hold outside the heap, of which arrayBuffers: Buffers); from /proc/<pid>/status the
 * resident anonymous memory (V8's pages, malloc's arenas, thread stacks) and file-backed pages (the node
 * binary and libraries as they are touched); V8's spaces (committed and used); the clients' open sessions.
 */
export interface SoakSample {
  t: number
  rss: number
  heapTotal: number
  heapUsed: number
  external: number
  arrayBuffers: number
  rssAnon: number
  rssFile: number
  /** Committed bytes of V8's spaces: the young generation (two semi-spaces; pinned unless BENCH_SOAK_YOUNG=auto), old objects, compiled code, large objects. */
  newSpace: number
  oldSpace: number
  codeSpace: number
  largeObjectSpace: number
  /** Used bytes of the old and code spaces (heapUsed is mostly their sum). */
  oldUsed: number
  codeUsed: number
  /** Sessions the clients held open at the time (each holds a little heap; 0.4 KiB in a regression of a 600 s soak). */
  sessions: number
}

const CLIENTS = 16
const MAX_SESSIONS = 60
const SAMPLE_EVERY_MS = 5000
const SEMI_SPACE_MIB = 1

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

function spacesOf(memory: Memory): Pick<SoakSample, 'newSpace' | 'oldSpace' | 'codeSpace' | 'largeObjectSpace' | 'oldUsed' | 'codeUsed'> {
  const size = (name: string): number => memory.spaces[name]?.size ?? 0
  const used = (name: string): number => memory.spaces[name]?.used ?? 0
  return {
    newSpace: size('new_space') + size('new_large_object_space'),
    oldSpace: size('old_space'),
    codeSpace: size('code_space') + size('code_large_object_space'),
    largeObjectSpace: size('large_object_space'),
    oldUsed: used('old_space'),
    codeUsed: used('code_space') + used('code_large_object_space'),
  }
}

/** A sample from the probe's reading and the process's /proc status (kB lines). */
function sampleOf(t: number, memory: Memory, pid: number, sessions: number): SoakSample {
  let status = ''
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    // not Linux: the /proc fields stay 0
  }
  const kB = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = memory
  return { t, rss, heapTotal, heapUsed, external, arrayBuffers, rssAnon: kB('RssAnon'), rssFile: kB('RssFile'), ...spacesOf(memory), sessions }
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
  const semiSpaceMiB = process.env.BENCH_SOAK_YOUNG === 'auto' ? undefined : SEMI_SPACE_MIB
  const nodeFlags = semiSpaceMiB === undefined ? [] : [`--min-semi-space-size=${semiSpaceMiB}`, `--max-semi-space-size=${semiSpaceMiB}`]
  const server = await startServer({ kind: 'edge', route: { max_sessions: 100_000 } }, { gc: true, nodeFlags })
  const client = new McpHttp(server.url, CLIENTS * 2)
  const soak: Soak = { seconds, warmupS, semiSpaceMiB, calls: 0, progressCalls: 0, sessionsCreated: 0, sessionsDeleted: 0, streams: 0, errors: 0, samples: [], rssSlopeBPerMin: 0, heapSlopeBPerMin: 0, slopes: {} }
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

    // BENCH_SOAK_SNAPSHOTS=<dir>: V8 heap snapshots of the server after the warm-up and at the end, to
    // compare object counts (each takes a second or two and disturbs the next samples).
    const snapshots = process.env.BENCH_SOAK_SNAPSHOTS
    let snapshotTaken = false
    const sampler = (async () => {
      for (let next = started + SAMPLE_EVERY_MS; next < end; next += SAMPLE_EVERY_MS) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())))
        const sample = sampleOf((performance.now() - started) / 1000, await server.measure(), server.pid, live.length)
        const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1)
        log(
          `  ${sample.t.toFixed(0).padStart(4)} s  rss ${mib(sample.rss)} (anon ${mib(sample.rssAnon)}, file ${mib(sample.rssFile)})  heap ${mib(sample.heapUsed)}/${mib(sample.heapTotal)} (new ${mib(sample.newSpace)}, old ${mib(sample.oldSpace)}, code ${mib(sample.codeSpace)})  ` +
            `external ${mib(sample.external)} (buffers ${mib(sample.arrayBuffers)}) MiB  ${soak.calls + soak.progressCalls} calls, ${live.length} sessions, ${soak.errors} errors`,
        )
        soak.samples.push(sample)
        if (snapshots !== undefined && sample.t >= warmupS && !snapshotTaken) {
          snapshotTaken = true
          log(`  heap snapshot: ${await server.snapshot(path.join(snapshots, 'soak-warm.heapsnapshot'))}`)
        }
      }
    })()
    await Promise.all([...clients, sampler])
    if (snapshots !== undefined) log(`  heap snapshot: ${await server.snapshot(path.join(snapshots, 'soak-end.heapsnapshot'))}`)
  } finally {
    client.close()
    await server.stop()
  }
  const settled = soak.samples.filter(({ t }) => t >= warmupS)
  for (const field of Object.keys(settled[0] ?? {}) as Array<keyof SoakSample>) {
    if (field !== 't' && field !== 'sessions') soak.slopes[field] = slope(settled.map((sample) => [sample.t, sample[field]])) * 60
  }
  soak.rssSlopeBPerMin = soak.slopes.rss ?? 0
  soak.heapSlopeBPerMin = soak.slopes.heapUsed ?? 0
  return soak
}

/** The soak in a few lines, for the terminal. */
export function formatSoak(soak: Soak): string {
  const kib = (bytes: number | undefined): string => `${((bytes ?? 0) / 1024).toFixed(1)} KiB/min`
  const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`
  const requests = soak.calls + soak.progressCalls
  const settled = soak.samples.filter(({ t }) => t >= soak.warmupS)
  const first = settled[0]
  const last = settled.at(-1)
  const span = (field: SampleField): string => (first === undefined || last === undefined ? '' : `${mib(first[field])} → ${mib(last[field])}, `)
  const { slopes } = soak
  return [
    `soak: ${soak.seconds} s (${soak.warmupS} s warm-up), ${requests} calls (${Math.round(requests / soak.seconds)}/s; ${soak.progressCalls} with progress), ` +
      `${soak.sessionsCreated} sessions created, ${soak.sessionsDeleted} deleted, ${soak.streams} GET streams, ${soak.errors} errors${soak.sample === undefined ? '' : ` (first: ${soak.sample})`}`,
    `  young generation: ${soak.semiSpaceMiB === undefined ? 'sized by V8 (BENCH_SOAK_YOUNG=auto)' : `pinned, 2 × ${soak.semiSpaceMiB} MiB`}`,
    `  over ${settled.length} samples after the warm-up (first → last, slope):`,
    `    RSS        ${span('rss')}${kib(slopes.rss)}   (outside V8's heap: ${kib((slopes.rss ?? 0) - (slopes.heapTotal ?? 0))})`,
    `    heapTotal  ${span('heapTotal')}${kib(slopes.heapTotal)}   (young ${kib(slopes.newSpace)}, old ${kib(slopes.oldSpace)}, code ${kib(slopes.codeSpace)})`,
    `    heapUsed   ${span('heapUsed')}${kib(slopes.heapUsed)}   (old ${kib(slopes.oldUsed)}, code ${kib(slopes.codeUsed)})`,
    `    external   ${span('external')}${kib(slopes.external)}   (buffers ${kib(slopes.arrayBuffers)})`,
  ].join('\n')
}
