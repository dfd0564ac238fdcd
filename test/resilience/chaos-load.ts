/**
 * A bounded load for the chaos tests (issue 16, the resilience suite), and the tally that judges it:
 * tools/call at a fixed rate over many sessions, and SSE streams with progress that resume with
 * Last-Event-ID whenever they are cut, all through a balancer that deals each request to the next
 * live gateway on a fresh connection (like nginx without sticky sessions: a refused connection goes
 * to the next target, a connection cut mid-request is cut for the client too).
 *
 *   calls ─┐                            ┌─► gateway A / worker 1
 *          ├─► balancer (round robin) ──┤
 *  streams ┘   refused ─► next target   └─► gateway B / worker 2
 *
 * Every call ends as exactly one of: ok, a JSON-RPC error, a refusal (a non-200 status with a
 * JSON-RPC error body), cut (the connection went with the process that held it), or a failure
 * (malformed, 5xx but 503, a lost session, a hang past the timeout). Failures must stay at 0.
 */
import { Agent, createServer, request as httpRequest } from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Test } from 'tap'
import { SseReader } from '../e2e/sse-reader.ts'

interface Teardown { teardown(fn: () => unknown): void }

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
/** How long a call may take before it counts as a hang. */
export const CALL_TIMEOUT_MS = 8000

/** A balancer on a free port over `targets`; `targets` may change while it runs (a dead host taken out). */
export async function balancer(t: Teardown, targets: string[]): Promise<string> {
  const agent = new Agent({ keepAlive: false })
  let next = 0
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = Buffer.concat(chunks)
      const first = next++
      const attempt = (tried: number): void => {
        const url = new URL(incoming.url!, targets[(first + tried) % targets.length])
        const upstream = httpRequest(url, { method: incoming.method, headers: { ...incoming.headers, host: url.host }, agent }, (answer) => {
          outgoing.writeHead(answer.statusCode!, answer.headers)
          answer.pipe(outgoing)
          answer.on('error', () => outgoing.destroy())
        })
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          // Nothing reached a gateway that refused the connection: the next one may take it.
          if (error.code === 'ECONNREFUSED' && tried + 1 < targets.length) attempt(tried + 1)
          else outgoing.destroy()
        })
        outgoing.on('close', () => upstream.destroy())
        upstream.end(body)
      }
      attempt(0)
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const address = server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/live`
}

export type Outcome = 'ok' | 'rpcError' | 'refused' | 'cut' | 'failure'

/** What every request came to, with the failures spelt out. */
export class Tally {
  readonly counts: Record<Outcome, number> = { ok: 0, rpcError: 0, refused: 0, cut: 0, failure: 0 }
  readonly statuses = new Map<number, number>()
  readonly failures: string[] = []
  /** When each cut happened (ms, performance.now()). */
  readonly cuts: number[] = []
  /** When each call that got no answer within CALL_TIMEOUT_MS was sent. */
  readonly hangs: number[] = []
  /** Per process (the pid `whoami` answered with): the send time of the latest call it answered. */
  readonly lastAnsweredSent = new Map<number, number>()

  add(outcome: Outcome, detail?: string): void {
    this.counts[outcome]++
    if (outcome === 'cut') this.cuts.push(performance.now())
    if (outcome === 'failure' && this.failures.length < 20) this.failures.push(detail ?? '')
  }

  /** Classifies one answered POST, sent at `sentAt`. */
  answer(status: number, contentType: string | null, text: string, id: unknown, sentAt?: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
    if (status === 404) return this.add('failure', `a lost session: 404 ${text}`)
    if (status >= 500 && status !== 503) return this.add('failure', `HTTP ${status}: ${text}`)
    const json = contentType?.startsWith('text/event-stream') ? text.split('\n').filter((line) => line.startsWith('data: ')).at(-1)?.slice(6) ?? '' : text
    let message: { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } }
    try {
      message = JSON.parse(json)
    } catch {
      return this.add('failure', `HTTP ${status}, not JSON: ${text.slice(0, 200)}`)
    }
    const wellFormed = message.jsonrpc === '2.0' && ('result' in message) !== (message.error !== undefined) &&
      (message.error === undefined || (Number.isInteger(message.error.code) && typeof message.error.message === 'string'))
    if (!wellFormed) return this.add('failure', `HTTP ${status}, malformed: ${text.slice(0, 200)}`)
    if (status !== 200) return this.add(message.id === id || message.id === null ? 'refused' : 'failure', `HTTP ${status} with id ${String(message.id)}`)
    if (message.id !== id) return this.add('failure', `id ${String(message.id)} for ${String(id)}`)
    this.add(message.error === undefined ? 'ok' : 'rpcError')
    if (message.error === undefined && sentAt !== undefined) this.#answeredBy(message.result, sentAt)
  }

  /** Notes which process answered a `whoami` call sent at `sentAt` (its text is `{"pid": …}`). */
  #answeredBy(result: unknown, sentAt: number): void {
    const text = (result as { content?: Array<{ text?: unknown }> } | undefined)?.content?.[0]?.text
    if (typeof text !== 'string') return
    let pid: unknown
    try {
      pid = (JSON.parse(text) as { pid?: unknown }).pid
    } catch {
      return
    }
    if (typeof pid === 'number' && sentAt > (this.lastAnsweredSent.get(pid) ?? -Infinity)) this.lastAnsweredSent.set(pid, sentAt)
  }

  /** Classifies a request sent at `sentAt` that got no answer: a hang is judged later, against when processes died. */
  lost(error: unknown, sentAt: number): void {
    const name = (error as Error).name
    if (name === 'TimeoutError' || name === 'AbortError') this.hangs.push(sentAt)
    else this.add('cut')
  }

  toString(): string {
    return `${JSON.stringify(this.counts)} statuses ${JSON.stringify(Object.fromEntries(this.statuses))}`
  }
}

/** POSTs one JSON-RPC message. */
export function post(url: string, sessionId: string | undefined, body: object, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { ...JSON_HEADERS }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal })
}

/** Opens a session (retrying while the store is away) and returns its id; each request bounded by CALL_TIMEOUT_MS. */
export async function openSession(url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const response = await post(url, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'chaos', version: '1' } } }, AbortSignal.timeout(CALL_TIMEOUT_MS))
    await response.text()
    const sessionId = response.headers.get('mcp-session-id')
    if (sessionId !== null) {
      await (await post(url, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' }, AbortSignal.timeout(CALL_TIMEOUT_MS))).text()
      return sessionId
    }
    if (attempt > 20) throw new Error(`initialize answered ${response.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Calls in flight at most, like a client's connection pool: past it the load waits, so a slow machine sees a bounded queue, not a growing one. */
export const MAX_IN_FLIGHT = 48

/** tools/call `whoami` at `perSecond` (at most MAX_IN_FLIGHT at once) over `sessions` until stopped; every call is tallied. */
export function callLoad(url: string, sessions: string[], perSecond: number, tally: Tally): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>()
  let sent = 0
  const started = performance.now()
  const call = async (n: number): Promise<void> => {
    const id = `c${n}`
    const at = performance.now()
    try {
      const response = await post(url, sessions[n % sessions.length], { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami' } }, AbortSignal.timeout(CALL_TIMEOUT_MS))
      tally.answer(response.status, response.headers.get('content-type'), await response.text(), id, at)
    } catch (error) {
      tally.lost(error, at)
    }
  }
  // A tick every 10 ms catches up to the rate: a busy loop sends a burst, never fewer calls (unless the pool is full).
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * perSecond)
    for (; sent < due && inFlight.size < MAX_IN_FLIGHT; sent++) {
      const promise = call(sent).finally(() => inFlight.delete(promise))
      inFlight.add(promise)
    }
  }, 10)
  return {
    async stop() {
      clearInterval(timer)
      await Promise.all([...inFlight])
    },
  }
}

/** What one progress stream came to, over however many resumptions. */
export interface StreamRun {
  /** Progress values in the order received, over every connection. */
  progress: number[]
  /** Event ids in the order received. */
  ids: string[]
  resumptions: number
  /** Cut before its first event: nothing to resume from (the process that held it died). */
  cut?: boolean
  /** When its first request was sent, if it got no answer within CALL_TIMEOUT_MS (judged as a hung call). */
  hungAt?: number
  /** The final JSON-RPC response, if one came. */
  final?: { id?: unknown; result?: unknown; error?: { code: number; message: string } }
  failure?: string
}

/**
 * A request whose head must come within CALL_TIMEOUT_MS, and whose body may then pause no longer
 * between two events (`touch` restarts the clock), and never past `deadline` (performance.now() ms):
 * a stream request is bounded as a call is. Node's cluster can lose a connection handed to a worker
 * in the instant it dies (nodejs/node#21746), and such a request is never answered nor closed:
 * unbounded, one hung the whole test until tap's timeout.
 */
async function bounded(send: (signal: AbortSignal) => Promise<Response>, deadline: number, timeoutMs: number): Promise<{ response: Response; touch(): void; done(): void }> {
  const controller = new AbortController()
  const expire = (): void => controller.abort(new DOMException(`nothing within ${timeoutMs} ms, or past the stream's deadline`, 'TimeoutError'))
  const arm = (): NodeJS.Timeout => setTimeout(expire, Math.max(0, Math.min(timeoutMs, deadline - performance.now())))
  let timer = arm()
  const done = (): void => clearTimeout(timer)
  try {
    const response = await send(controller.signal)
    return { response, done, touch: () => { clearTimeout(timer); timer = arm() } }
  } catch (error) {
    done()
    throw error
  }
}

const isTimeout = (error: unknown): boolean => (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError'

/** Where a progress stream starts (a given gateway; the balancer by default), and its read timeout (CALL_TIMEOUT_MS by default; the kit's own test waits out shorter ones). */
export interface StreamOptions { startUrl?: string; timeoutMs?: number }

/**
 * Runs `tools/call slow` with a progress token on `sessionId` and reads its stream to the end,
 * resuming with Last-Event-ID (through the balancer, so on any gateway) whenever it is cut, or when
 * a resumption or the stream stays silent past the read timeout (CALL_TIMEOUT_MS). A first request
 * never answered is a hang, judged as a call's is. Nothing waits past `deadline`.
 */
export async function progressStream(url: string, sessionId: string, id: string, steps: number, deadline: number, { startUrl = url, timeoutMs = CALL_TIMEOUT_MS }: StreamOptions = {}): Promise<StreamRun> {
  const run: StreamRun = { progress: [], ids: [], resumptions: 0 }
  const sentAt = performance.now()
  let current: Awaited<ReturnType<typeof bounded>>
  try {
    current = await bounded((signal) => post(startUrl, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { steps }, _meta: { progressToken: id } } }, signal), deadline, timeoutMs)
  } catch (error) {
    if (isTimeout(error)) run.hungAt = sentAt
    else run.cut = true
    return run
  }
  try {
    while (performance.now() < deadline) {
      const response = current.response
      if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
        const text = await response.text().catch(() => undefined)
        if (text === undefined || (response.status === 503 && run.ids.length > 0)) {
          // Cut or silent, or the store is away: resume again shortly.
        } else if (response.status === 200 || response.status >= 400) {
          try { run.final = JSON.parse(text) } catch { run.failure = `HTTP ${response.status}: ${text.slice(0, 200)}` }
          if (response.status === 404 || (response.status >= 500 && response.status !== 503)) run.failure = `HTTP ${response.status}: ${text.slice(0, 200)}`
          return run
        }
      } else {
        const reader = new SseReader(response)
        try {
          for (let event = await reader.next(); event !== undefined; event = await reader.next()) {
            current.touch()
            if (event.id !== undefined) run.ids.push(event.id)
            if (event.data === '') continue
            const message = JSON.parse(event.data) as { method?: string; params?: { progress?: number }; id?: unknown }
            if (message.method === 'notifications/progress') run.progress.push(message.params!.progress!)
            else if (message.method === undefined) {
              run.final = message as StreamRun['final']
              return run
            }
          }
        } catch { /* cut or silent: resume below */ }
      }
      current.done()
      const last = run.ids.at(-1)
      if (last === undefined) {
        run.cut = true
        return run
      }
      if (performance.now() >= deadline) break
      await new Promise((resolve) => setTimeout(resolve, 100))
      run.resumptions++
      try {
        current = await bounded((signal) => fetch(url, { signal, headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': last } }), deadline, timeoutMs)
      } catch {
        current = { response: new Response('', { status: 503 }), touch: () => undefined, done: () => undefined }
      }
    }
  } finally {
    current.done()
  }
  run.failure = `no final answer by the deadline (progress ${run.progress.join(',')})`
  return run
}

/** Checks a stream run: progress 1, 2, … k once each and in order, ids never repeated, a final answer with the request's id. */
export function streamProblems(run: StreamRun, id: string): string[] {
  const problems: string[] = []
  // Cut before its first event, or its first request never answered (judged with the hung calls).
  if (run.cut === true || run.hungAt !== undefined) return problems
  if (run.failure !== undefined) problems.push(run.failure)
  run.progress.forEach((value, index) => {
    if (value !== index + 1) problems.push(`progress ${run.progress.join(',')}: not 1…k once each`)
  })
  if (new Set(run.ids).size !== run.ids.length) problems.push(`an event id twice: ${run.ids.join(',')}`)
  if (run.final === undefined) problems.push('no final answer')
  else if (run.final.id !== id) problems.push(`final answer for ${String(run.final.id)}`)
  return [...new Set(problems)]
}

export interface ChaosPlan {
  /** The balancer's URL. */
  url: string
  sessions: number
  callsPerSecond: number
  /** Progress streams kept running side by side. */
  streams: number
  /** Progress steps per stream (40 ms each). */
  steps: number
  /** Injects the faults while the load runs; resolves when the load may stop. `stream` starts one more progress stream, at `startUrl` (a given gateway). */
  faults(stream: (startUrl: string) => void): Promise<void>
}

export interface ChaosResult {
  tally: Tally
  sessions: string[]
  runs: Array<{ id: string; run: StreamRun }>
  seconds: number
  /**
   * The longest this process's event loop was held up while the load ran (ms). Every time the tally
   * keeps (a call sent, a cut seen) is read by this loop, so it may be that late: the windows the
   * judge compares them with are widened by it, no more.
   */
  lagMs: number
}

/**
 * Runs the load, injects the faults, stops the load and waits for every call and stream to end.
 * The load stops whatever the faults do: a fault that throws (a log line that never came) must fail
 * the test, not leave the call timer and the stream loops running, which kept the file's process
 * alive after its test had failed, until tap's timeout.
 */
export async function underLoad(plan: ChaosPlan): Promise<ChaosResult> {
  const sessions = await Promise.all(Array.from({ length: plan.sessions }, () => openSession(plan.url)))
  const tally = new Tally()
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  const started = performance.now()
  const calls = callLoad(plan.url, sessions, plan.callsPerSecond, tally)
  const runs: ChaosResult['runs'] = []
  let stopping = false
  let n = 0
  const streamLoop = async (lane: number): Promise<void> => {
    while (!stopping) {
      const id = `s${lane}-${n++}`
      runs.push({ id, run: await progressStream(plan.url, sessions[lane % sessions.length]!, id, plan.steps, performance.now() + 30_000) })
    }
  }
  const lanes = Array.from({ length: plan.streams }, (_, lane) => streamLoop(lane))
  const extra = (startUrl: string): void => {
    const id = `x${n++}`
    const deadline = performance.now() + 30_000
    lanes.push(progressStream(plan.url, sessions[n % sessions.length]!, id, plan.steps * 4, deadline, { startUrl }).then((run) => void runs.push({ id, run })))
  }
  try {
    await plan.faults(extra)
  } finally {
    stopping = true
    await calls.stop()
    // Every stream ends by its deadline (30 s from its start) at the latest.
    await Promise.all(lanes)
    lag.disable()
  }
  return { tally, sessions, runs, seconds: (performance.now() - started) / 1000, lagMs: lag.max / 1e6 }
}

/** How long lostSessions asks a session until the store answers for it. */
const SESSION_CHECK_MS = 15_000

/**
 * Sessions that no longer answer a call: each asked (all at once) until the store answers, for up to
 * SESSION_CHECK_MS in all (asked one after another with up to 100 tries of CALL_TIMEOUT_MS each, a
 * gateway that stopped answering made this wait for hours instead of failing).
 */
export async function lostSessions(url: string, sessions: string[]): Promise<string[]> {
  const until = performance.now() + SESSION_CHECK_MS
  const answers = await Promise.all(sessions.map(async (sessionId) => {
    for (;;) {
      const left = Math.max(1, Math.min(CALL_TIMEOUT_MS, until - performance.now()))
      const response = await post(url, sessionId, { jsonrpc: '2.0', id: 'alive', method: 'tools/call', params: { name: 'whoami' } }, AbortSignal.timeout(left)).catch(() => undefined)
      const text = await response?.text().catch(() => undefined)
      if (response?.status === 200) return undefined
      if (response?.status === 404 || performance.now() >= until) return `${sessionId}: ${response?.status ?? 'cut or no answer'} ${text ?? ''}`
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }))
  return answers.filter((answer) => answer !== undefined)
}

/**
 * From each worker's death to the moment the primary knew of it (performance.now() ms), the pid of
 * the worker that died in each span, and how many hangs those spans may excuse.
 */
export interface ChaosHandoff { spans: Array<[number, number]>; victims: number[]; most: number }

/**
 * The assertions every chaos run makes: no call failed, a cut only while a process was dying (each
 * window [from, to] in performance.now() ms), most calls answered, every stream's events once and in
 * order with its final answer, and no session lost.
 */
export async function judge(t: Test, url: string, result: ChaosResult, windows: Array<[number, number]>, handoff?: ChaosHandoff): Promise<void> {
  const { tally, runs } = result
  const total = Object.values(tally.counts).reduce((sum, count) => sum + count, 0) + tally.hangs.length
  const resumed = runs.filter(({ run }) => run.resumptions > 0)
  const replayed = resumed.reduce((sum, { run }) => sum + run.progress.length, 0)
  t.comment(`${total} calls in ${result.seconds.toFixed(1)} s (${Math.round(total / result.seconds)}/s): ${tally}`)
  t.comment(`${runs.length} progress streams, ${resumed.length} resumed after a cut (${replayed} progress events over them), ${runs.filter(({ run }) => run.cut === true).length} cut before their first event`)
  // Node's round-robin cluster hands a connection the primary accepted to a worker over IPC; one handed
  // to a worker in the instant it dies is never answered nor closed (nodejs/node#21746): the client's
  // timeout ends it. Such hangs are allowed, few and only right after a kill; any other is a failure.
  // A call sent shortly before the death may still be on its way through the balancer and the primary.
  // A send time is when this process's loop got to it: a call timed `lag` before the death may have left later.
  const lag = Math.round(result.lagMs)
  t.comment(`this process's event loop was held up ${lag} ms at most: the windows below are widened by that`)
  // The primary hands connections to a worker one at a time, the next once the worker has taken the
  // last, so under load accepted connections wait in its queue and one may be handed to the victim
  // well after it was sent (seen: 2.9 s before the death, beside two CPU hogs). The lost one is the
  // last the victim was handed: it answered nothing sent after it. So a hang is excused when it was
  // sent before the primary knew of the death and either shortly before the death, or after the
  // latest call the victim did answer (give or take the window's slack).
  const hangs = [...tally.hangs, ...runs.flatMap(({ run }) => run.hungAt ?? [])]
  const slack = 250 + lag
  const victimQuietSince = (index: number): number => tally.lastAnsweredSent.get(handoff?.victims[index] ?? -1) ?? -Infinity
  const excused = hangs.filter((at) => handoff !== undefined && handoff.spans.some(([from, to], index) => at <= to + 50 && (at >= from - slack || at + slack > victimQuietSince(index))))
  t.comment(`${hangs.length} calls and streams got no answer within ${CALL_TIMEOUT_MS} ms, ${excused.length} of them sent before the primary knew of a worker's death and after the latest call that worker answered (or from ${slack} ms before its death)`)
  if (handoff !== undefined) t.comment(`the latest call each killed worker answered was sent ${JSON.stringify(handoff.spans.map(([from], index) => Math.round(victimQuietSince(index) - from)))} ms from its death`)
  const first = handoff?.spans[0]?.[0] ?? windows[0]?.[0] ?? 0
  t.same(hangs.filter((at) => !excused.includes(at)).map((at) => Math.round(at - first)), [], `no call hung, but for a connection handed to a dying worker (times from the first death; spans ${JSON.stringify(handoff?.spans.map(([from, to]) => [0, Math.round(to - from)]) ?? [])})`)
  t.ok(excused.length <= (handoff?.most ?? 0), `at most ${handoff?.most ?? 0} such`)
  t.same(tally.failures, [], 'no call failed: every one answered, refused with a JSON-RPC error, or cut as its process died')
  t.equal(tally.counts.failure, 0, 'no failures')
  // A cut is timed when this loop saw it, up to `lag` after the socket closed.
  const stray = tally.cuts.filter((at) => !windows.some(([from, to]) => at >= from && at <= to + lag))
  t.same(stray.map((at) => Math.round(at - first)), [], `every cut (${tally.cuts.length}) happened while a process died (times from the first death)`)
  t.ok(tally.counts.ok > total * 0.5, `most calls answered (${tally.counts.ok} of ${total})`)
  const problems = runs.flatMap(({ id, run }) => streamProblems(run, id).map((problem) => `${id}: ${problem}`))
  t.same(problems, [], 'every stream: progress 1…k once each in order, then its final answer')
  t.ok(runs.filter(({ run }) => run.final?.result !== undefined).length > 0, 'streams completed')
  t.ok(resumed.length > 0, `streams cut by a death resumed elsewhere (${resumed.length}), their events once each`)
  t.same(await lostSessions(url, result.sessions), [], `0 of ${result.sessions.length} sessions lost`)
}
