/**
 * The access line's short path writes what pino would: for every shape of line (session or era,
 * with or without a principal) and for strings that need escaping, the two lines are the same bytes
 * but for the time, whether the line goes to the log buffer (the default, `log.buffer` bytes; the
 * line written into its batch in place, or as a string when longer than a batch) or to an unbuffered
 * destination (`log.buffer: 0`, stdio's stderr). The time is the clock's, in every digit. A logger
 * with extra redact paths takes pino's path, so redaction still applies.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { AccessLine, QUOTED_CACHE_SIZE } from '../../gateway/log/access-line.ts'
import { createLogger, flushLogger } from '../../gateway/log/logger.ts'

const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-access-line-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

type Fields = [sessionId: string | undefined, principal: string | undefined, method: string, status: number, era: string | undefined, ms: number]

const CASES: Fields[] = [
  ['4729fc00-7bc3-4d1e-9d3e-0a1b2c3d4e5f', undefined, 'tools/call', 200, undefined, 0.02],
  ['4729fc00-7bc3-4d1e-9d3e-0a1b2c3d4e5f', 'alice@example.com', 'resources/read', 404, undefined, 12.5],
  [undefined, undefined, 'tools/list', 200, '2026-07-28', 1],
  [undefined, 'svc "deploy"\n\u2028\u0001é', 'we"ird\\method\t', 429, '2026-07-28', 0],
  [undefined, undefined, 'notifications/initialized', 202, undefined, Number.NaN],
  // Client-chosen texts longer than the cap (field-cap.ts): both paths cut them the same way.
  ['4729fc00-7bc3-4d1e-9d3e-0a1b2c3d4e5f', 'p'.repeat(100_000), 'm'.repeat(1_000_000), 200, undefined, 1],
  [undefined, undefined, 'tools/call', 400, 'e'.repeat(5000), 1],
]

/** The lines a logger wrote to `file`, with the time taken out. */
function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => line.replace(/"time":\d+/, '"time":0'))
}

/**
 * Buffer sizes: 0, each line written at once; a batch of a line or two (sealed often; the lines of
 * capped long fields are longer than a batch); the default.
 */
const BUFFERS = [0, 512, 32 * 1024]

for (const buffer of BUFFERS) t.test(`the short path writes the bytes pino writes (log.buffer ${buffer})`, async (t) => {
  const file = path.join(dir, `plain-${buffer}.log`)
  // A route whose name is not ASCII: its bindings' bytes are UTF-8, several to a character.
  for (const route of ['/mcp', '/mcp/café']) {
    const logger = createLogger({ level: 'info', buffer }, { dest: file }).child({ route })
    const line = new AccessLine(logger)
    for (const [sessionId, principal, method, status, era, ms] of CASES) {
      line.write(sessionId, principal, method, status, era, ms)
      logger.info({ sessionId, principal, method, status, era, ms }, 'mcp request')
    }
    await flushLogger(logger)
  }
  const written = lines(file)
  t.equal(written.length, CASES.length * 4)
  for (let i = 0; i < CASES.length * 2; i++) {
    t.equal(written[2 * i], written[2 * i + 1], `case ${i % CASES.length} on route ${i < CASES.length ? 1 : 2}: the same line`)
    t.doesNotThrow(() => JSON.parse(written[2 * i]!), 'valid JSON')
  }
  t.notOk(written.some((text) => text.includes('4729fc00-7bc3')), 'the session id itself is never written, only its hash')
})

t.test('below info nothing is written; extra redact paths take pino path and are redacted', async (t) => {
  const quiet = path.join(dir, 'quiet.log')
  new AccessLine(createLogger({ level: 'warn', buffer: 0 }, { dest: quiet })).write('s', undefined, 'tools/call', 200, undefined, 1)
  t.equal(readFileSync(quiet, 'utf8'), '', 'nothing at warn')

  const file = path.join(dir, 'redacted.log')
  const logger = createLogger({ level: 'info', buffer: 0, redact: { headers: [], query_params: [], paths: ['principal'] } }, { dest: file })
  new AccessLine(logger).write('s', 'alice@example.com', 'tools/call', 200, undefined, 1)
  const [written] = lines(file)
  t.match(written, /"principal":"\[Redacted\]"/, 'the principal redacted as configured')
  t.notMatch(written, /alice/, 'and nowhere in the line')
})

for (const buffer of BUFFERS) t.test(`the duration is written as pino writes it rounded to hundredths, for any duration (log.buffer ${buffer})`, async (t) => {
  const file = path.join(dir, `durations-${buffer}.log`)
  const logger = createLogger({ level: 'info', buffer }, { dest: file })
  const line = new AccessLine(logger)
  const durations = fc.sample(fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.integer({ min: 0, max: 100_000 }).map((n) => n / 1000)), 1_000)
  durations.push(0, 0.004999, 0.005, 0.1, 0.15, 1.005, 99.995, 1e12, Number.POSITIVE_INFINITY)
  for (const ms of durations) {
    line.write(undefined, undefined, 'tools/call', 200, undefined, ms)
    logger.info({ method: 'tools/call', status: 200, ms: Math.round(ms * 100) / 100 }, 'mcp request')
  }
  await flushLogger(logger)
  const written = lines(file)
  let same = 0
  for (let i = 0; i < durations.length; i++) if (written[2 * i] === written[2 * i + 1]) same++
  t.equal(same, durations.length, 'every duration written the same way')
})

t.test('the caches of quoted texts stay within their bound however many texts clients choose', async (t) => {
  const file = path.join(dir, 'many.log')
  const logger = createLogger({ level: 'info', buffer: 0 }, { dest: file })
  const line = new AccessLine(logger)
  const count = QUOTED_CACHE_SIZE * 2 + 17
  let largest = 0
  for (let i = 0; i < count; i++) {
    line.write(`session-${i}`, `principal-${i}`, `invented/method-${i}`, 404, `era-${i}`, 1)
    const { sessions, methods, eras, principals } = line.cached
    largest = Math.max(largest, sessions, methods, eras, principals)
  }
  t.ok(largest <= QUOTED_CACHE_SIZE, `at most ${QUOTED_CACHE_SIZE} entries each (largest seen: ${largest})`)
  t.ok(largest >= QUOTED_CACHE_SIZE - 1, 'and the caches were used up to it')
  // After the caches were emptied and refilled, a line still carries its own session and method.
  const written = lines(file)
  t.equal(written.length, count)
  const last = JSON.parse(written[count - 1]!) as { method: string; sessionId: string; principal: string; era: string }
  t.equal(last.method, `invented/method-${count - 1}`)
  t.equal(last.principal, `principal-${count - 1}`)
  t.equal(last.era, `era-${count - 1}`)
  logger.info({ sessionId: `session-${count - 1}`, method: 'x' }, 'x')
  t.equal(last.sessionId, (JSON.parse(lines(file)[count]!) as { sessionId: string }).sessionId, 'the hash of its own session, as pino redacts it')
})

for (const buffer of BUFFERS) t.test(`the time is written as a number prints it, in every digit (log.buffer ${buffer})`, async (t) => {
  const file = path.join(dir, `times-${buffer}.log`)
  const logger = createLogger({ level: 'info', buffer }, { dest: file })
  const line = new AccessLine(logger)
  // Milliseconds of one, two and three digits (padded to three in the line), seconds changing and
  // coming back, and times past 2038 (whose seconds are no small integer: written another way).
  const second = 1_764_680_000_000
  const times = [second, second + 5, second + 50, second + 500, second + 999, second + 1000, second + 7, second + 86_400_123, 2 ** 31 * 1000 + 5, 2 ** 40 + 17, 1]
  for (const now of times) line.write(undefined, undefined, 'tools/call', 200, undefined, 1, now)
  await flushLogger(logger)
  const written = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((text) => /^\{"level":30,"time":(\d+),/.exec(text)?.[1])
  t.same(written, times.map((now) => `${now}`), 'each line carries its time')
})
