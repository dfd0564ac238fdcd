/**
 * What every fuzz property of the resilience suite shares (issue 16): the seed, batches of cases run
 * side by side against one gateway, a watch on the gateway's event loop (the gateway runs in this
 * process, so this process's loop is its loop), the check that an answer is a well-formed JSON-RPC
 * message with the right id, and a readable report of a shrunk failure.
 *
 *   fc.array(case, batch) ─► run(batch): every case at once, each answer checked ─► the loop held
 *   (late and busy) no longer than LOOP_BOUND_MS during the batch ─► on failure fast-check shrinks the batch, and the report
 *   names the one case that failed, what came back and how to replay it (FUZZ_SEED, FUZZ_PATH)
 */
import fc from 'fast-check'
import type { Test } from 'tap'
import { MAX_ID_LENGTH } from '../../gateway/wire/jsonrpc.ts'

/** The seed of every property in this run: FUZZ_SEED replays one, FUZZ_SCALE widens every case count. */
export const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)
const SCALE = Number(process.env.FUZZ_SCALE ?? 1)

/** The longest the gateway's event loop may be held by one task while a batch runs (GC and a loaded CI box included). */
export const LOOP_BOUND_MS = Number(process.env.FUZZ_LOOP_BOUND_MS ?? 500)

/** CPU time this process used so far (every thread: an upper bound on the main thread's). */
const cpuMs = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** A 2026-07-28 request's `_meta` envelope. */
export const STATELESS = '2026-07-28'
export const envelope = { 'io.modelcontextprotocol/protocolVersion': STATELESS, 'io.modelcontextprotocol/clientCapabilities': {} }

/** The methods a case picks from (subscriptions/listen is left out: its answer is a stream that stays open by design). */
export const METHODS = ['initialize', 'ping', 'tools/list', 'tools/call', 'prompts/get', 'prompts/list', 'resources/read', 'resources/list',
  'resources/subscribe', 'resources/unsubscribe', 'completion/complete', 'logging/setLevel', 'server/discover',
  'notifications/cancelled', 'notifications/initialized', 'notifications/progress']

/** Ids a case may carry: fine ones and every shape that cannot be echoed exactly. */
export const idArb = fc.oneof(
  fc.integer(), fc.string({ maxLength: 20 }), fc.maxSafeInteger(),
  fc.constantFrom(2 ** 53, 2 ** 53 + 2, -(2 ** 53) - 2, 1.5, 1e300, -0, null, true, 'x'.repeat(300), 'x'.repeat(MAX_ID_LENGTH + 1), [1], { a: 1 }),
)

/** Params: the names the test handler knows, junk beside them, and non-objects. */
export const paramsArb = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(fc.constantFrom('name', 'uri', 'arguments', 'cursor', 'level', 'ref', 'argument', 'protocolVersion', 'capabilities', 'requestState', '_meta', 'x'),
    fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom('echo', 'fail', 'leak', 'typo', 'count', 'refuse', 'test://broken', 'greet', 'completes', 'debug'))),
  fc.jsonValue({ maxDepth: 3 }),
)

/** `depth` arrays or objects nested around 1. */
export const nested = (depth: number, open: '[' | '{"a":'): string => `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`

/** A case as a report shows it: fast-check's notation, cut short. */
export function show(value: unknown, max = 600): string {
  const text = fc.stringify(value)
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text
}

/** A failed check: the case, what came back, and why, in a few lines. */
export class CaseFailure extends Error {
  constructor(why: string, sent: unknown, got: string) {
    super(`${why}\n  sent: ${show(sent)}\n  got:  ${got.length > 600 ? `${got.slice(0, 600)}…` : got}`)
  }
}

/** The id an answer must carry for a parsed message: its own when a string (not over MAX_ID_LENGTH) or safe integer, else null. */
export function idFor(message: unknown): string | number | null {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return null
  const id = (message as { id?: unknown }).id
  return (typeof id === 'string' && id.length <= MAX_ID_LENGTH) || Number.isSafeInteger(id) ? (id as string | number) : null
}

/** Parses `text` the way a client would, or undefined when it is not valid UTF-8 JSON. */
export function parsed(payload: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof payload === 'string' ? payload : new TextDecoder('utf-8', { fatal: true }).decode(payload))
  } catch {
    return undefined
  }
}

/**
 * Checks that `text` is one well-formed JSON-RPC 2.0 response (exactly one of result and error; an
 * error with an integer code and a message) whose id is `id` (undefined: any id a client could read).
 */
export function checkResponse(text: string, id: string | number | null | undefined, sent: unknown): Record<string, unknown> {
  let answer: Record<string, unknown>
  try {
    answer = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new CaseFailure('the answer is not JSON', sent, text)
  }
  if (answer === null || typeof answer !== 'object' || answer.jsonrpc !== '2.0') throw new CaseFailure('not a JSON-RPC 2.0 message', sent, text)
  if ('method' in answer) return answer // a request or notification of the gateway's own (progress, log)
  const error = answer.error as { code?: unknown; message?: unknown } | undefined
  if (('result' in answer) === (error !== undefined)) throw new CaseFailure('neither or both of result and error', sent, text)
  if (error !== undefined && (!Number.isInteger(error.code) || typeof error.message !== 'string')) throw new CaseFailure('a malformed error', sent, text)
  if (id !== undefined && answer.id !== id) throw new CaseFailure(`answered with id ${JSON.stringify(answer.id)}, the request's was ${JSON.stringify(id)}`, sent, text)
  if (answer.id !== null && typeof answer.id !== 'string' && !Number.isSafeInteger(answer.id)) throw new CaseFailure('an id no client can match', sent, text)
  return answer
}

/**
 * How long this process's event loop was held, sampled by a 5 ms timer: a tick's lateness, but no
 * more than the CPU time the process used meanwhile, so time the scheduler gave to other processes
 * on a busy machine does not count as the gateway blocking its loop.
 */
export class LoopWatch {
  #worst = 0
  #overall = 0
  #expected = performance.now() + 5
  #cpu = cpuMs()
  readonly #timer = setInterval(() => {
    const now = performance.now()
    const cpu = cpuMs()
    const held = Math.min(now - this.#expected, cpu - this.#cpu)
    if (held > this.#worst) this.#worst = held
    if (held > this.#overall) this.#overall = held
    this.#expected = now + 5
    this.#cpu = cpu
  }, 5)

  /** The longest hold since the last call (ms), and starts a new window. */
  take(): number {
    const worst = this.#worst
    this.#worst = 0
    return worst
  }

  /** The longest hold over the whole watch (ms). */
  get overall(): number {
    return this.#overall
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}

export interface FuzzOptions<Case> {
  /** What the report and the case count call this property. */
  name: string
  arbitrary: fc.Arbitrary<Case>
  /** Cases in CI (times FUZZ_SCALE). */
  cases: number
  /** Cases run side by side in one property run. */
  batch: number
  /** Runs a batch; throws a CaseFailure for a case that breaks the property. */
  run(batch: Case[]): Promise<void>
}

/**
 * Runs the property and reports it: the case count, the time, the longest event-loop hold, and on
 * failure the shrunk case and the replay line. Returns the number of cases run.
 */
export async function fuzz<Case>(t: Test, options: FuzzOptions<Case>): Promise<number> {
  // Batch lengths are uniform over 1…batch, so a run averages (batch + 1) / 2 cases.
  const runs = Math.ceil((options.cases * SCALE * 2) / (options.batch + 1))
  const watch = new LoopWatch()
  const started = performance.now()
  let cases = 0
  const property = fc.asyncProperty(fc.array(options.arbitrary, { minLength: 1, maxLength: options.batch, size: 'max' }), async (batch) => {
    watch.take()
    await options.run(batch)
    cases += batch.length
    // Let the timers phase run, so a hold at the batch's very end is seen in its window.
    await new Promise((resolve) => setTimeout(resolve, 0))
    const held = watch.take()
    if (held > LOOP_BOUND_MS) throw new Error(`the event loop was blocked ${Math.round(held)} ms (bound ${LOOP_BOUND_MS} ms) while these ran: ${show(batch)}`)
  })
  // fast-check shrinks a failing batch towards the one case that fails.
  const details = await fc.check(property, { numRuns: runs, seed: SEED, endOnFailure: false, verbose: 0,
    interruptAfterTimeLimit: 170_000, markInterruptAsFailure: true })
  watch.stop()
  const seconds = (performance.now() - started) / 1000
  t.comment(`${options.name}: ${cases} cases in ${seconds.toFixed(1)} s; event loop held at most ${Math.round(watch.overall)} ms (seed ${SEED})`)
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    // A comment keeps the report's lines (a failure's message is folded into one).
    t.comment([
      `${options.name} failed after ${details.numRuns} runs, shrunk ${details.numShrinks} times:`,
      error,
      `replay: FUZZ_SEED=${details.seed} (path ${details.counterexamplePath ?? '?'})`,
    ].join('\n'))
    t.fail(`${options.name}: ${error.split('\n')[0]}`)
  } else {
    t.pass(`${options.name}: the property held for ${cases} cases`)
  }
  return cases
}
