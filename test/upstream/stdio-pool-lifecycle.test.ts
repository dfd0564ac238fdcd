// The life of the stdio pool's children, as real processes: lazy start, idle reaping and shutdown
// that kill the whole process group (no orphan), restarts with backoff after a crash, a hung
// child replaced after failed pings, bad output that disturbs no other session, stderr in the log.
import t from 'tap'
import { TransportError } from '../../gateway/client/index.ts'
import { pino } from 'pino'
import { STDERR_LINE_MAX, StdioChildProcess } from '../../gateway/upstream/stdio-pool-process.ts'
import { alive, answer, connect, eventually, poolFor, sleep } from './stdio-harness.ts'

interface Echo { marker: string; id: number; pid: number }
interface Family { pid: number; grandchild: number }

t.test('children start lazily, on the first initialize', async (t) => {
  const { pool } = poolFor(t)
  const transport = pool.transportFor({ session: 'a' })
  await transport.start()
  t.same(pool.status(), [], 'no child before a session speaks')
  const client = await connect(t, pool, { session: 'b' })
  t.equal(pool.status().length, 1)
  t.equal(client.serverInfo?.name, 'echo-fixture')
})

t.test('an idle child is stopped with its whole process group; the session goes on with a new child', async (t) => {
  const { pool, logs } = poolFor(t, { pool: { idle_timeout: 0.4 } })
  const client = await connect(t, pool, { session: 'a' })
  const family = answer<Family>(await client.callTool('grandchild'))
  t.ok(alive(family.pid) && alive(family.grandchild), 'the child and the process it started run')
  await eventually(() => !alive(family.pid) && !alive(family.grandchild), 3000)
  t.pass('idle reaping killed the child and its grandchild')
  t.same(pool.status(), [])
  t.ok(logs.some((line) => line.msg === 'stdio upstream child stopped' && String(line.reason).startsWith('idle')))
  const next = answer<Echo>(await client.callTool('echo', { marker: 'again' }))
  t.equal(next.marker, 'again', 'the session still works')
  t.not(next.pid, family.pid, 'on a new child')
})

t.test('a child that only talks on its own is idle all the same', async (t) => {
  const { pool } = poolFor(t, { env: { FIXTURE_CHATTY: '1' }, pool: { idle_timeout: 0.3 } })
  let ticks = 0
  const client = await connect(t, pool, { session: 'a' }, { on: { log: () => void ticks++ } })
  const { pid } = answer<Echo>(await client.callTool('echo', { marker: 'x' }))
  await eventually(() => !alive(pid), 3000)
  t.ok(ticks > 0, 'the session heard the child\'s log messages')
  t.same(pool.status(), [], 'and the child was stopped after idle_timeout')
})

t.test('pool.min children survive idleness', async (t) => {
  const { pool } = poolFor(t, { pool: { min: 1, idle_timeout: 0.2 } })
  await pool.warm()
  const [child] = pool.status()
  await sleep(600)
  t.same(pool.status().map((c) => c.pid), [child!.pid], 'the warm child is kept')
})

t.test('close() kills every process group, also of a child that ignores SIGTERM', async (t) => {
  const { pool, logs } = poolFor(t, { env: { FIXTURE_IGNORE_TERM: '1' } }, { graceMs: 200, settleMs: 0 })
  const families: Family[] = []
  const clients = [await connect(t, pool, { session: 'a' }), await connect(t, pool, { session: 'b' })]
  // b started a second child and waited on the first meanwhile: it moves once that one is ready.
  await eventually(() => pool.status().filter((child) => child.state === 'ready').length === 2, 5000)
  for (const client of clients) families.push(answer<Family>(await client.callTool('grandchild')))
  t.not(families[0]!.pid, families[1]!.pid, 'two children')
  const started = Date.now()
  let closed = 0
  const transport = pool.transportFor({ session: 'c' })
  transport.onclose = () => closed++
  await transport.start()
  await pool.close()
  for (const family of families) {
    t.notOk(alive(family.pid), `child ${family.pid} is gone`)
    t.notOk(alive(family.grandchild), `grandchild ${family.grandchild} is gone`)
  }
  t.ok(Date.now() - started < 3000, 'within the grace periods')
  t.equal(closed, 1, 'open sessions are told their connection closed')
  t.equal(logs.filter((line) => line.msg === 'stdio upstream ignored SIGTERM; killing its process group').length, 2, 'SIGKILL ended what SIGTERM did not')
})

t.test('a crash fails the requests in flight cleanly; restarts wait with backoff', async (t) => {
  const { pool, logs } = poolFor(t, {}, { backoff: { initialMs: 300, maxMs: 5000, resetMs: 60_000 } })
  const client = await connect(t, pool, { session: 'a' })
  const other = await connect(t, pool, { session: 'b' }) // another child: pool.max is 4
  const pid = answer<Echo>(await client.callTool('echo', { marker: 'x' })).pid
  const inFlight = client.callTool('echo', { marker: 'slow', delay: 2000 }).catch((error: unknown) => error)
  const crashed = await client.callTool('crash').catch((error: unknown) => error)
  t.type(crashed, TransportError, 'the crashing call fails with a TransportError')
  t.match(await inFlight, { name: 'TransportError', message: /exited with code 3/ }, 'so does the other request in flight')
  t.equal(answer<Echo>(await other.callTool('echo', { marker: 'b' })).marker, 'b', 'the other child is not disturbed')

  // A session whose child crashed: its next call waits for the restart (due within 1 s) and is served.
  const lone = await connect(t, poolFor(t, {}, { backoff: { initialMs: 300, maxMs: 5000, resetMs: 60_000 } }).pool, { session: 'z' })
  const lonePid = answer<Echo>(await lone.callTool('echo', { marker: 'first' })).pid
  await lone.callTool('crash').catch(() => undefined)
  const asked = Date.now()
  const back = answer<Echo>(await lone.callTool('echo', { marker: 'back' }))
  t.equal(back.marker, 'back', 'the next call is served, by a new child')
  t.not(back.pid, lonePid)
  t.ok(Date.now() - asked >= 250, 'after the backoff')

  // A restart further off than RESTART_WAIT_MS: the call is answered at once, with the wait.
  const far = await connect(t, poolFor(t, {}, { backoff: { initialMs: 3000, maxMs: 10_000, resetMs: 60_000 } }).pool, { session: 'y' })
  await far.callTool('crash').catch(() => undefined)
  const early = await far.callTool('echo', { marker: 'too soon' }).catch((error: unknown) => error)
  t.match(early, { name: 'TransportError', message: /failed 1 times in a row; next start in \d+ ms/ })
  t.ok(logs.some((line) => line.msg === 'stdio upstream child failed; restarting with backoff' && line.childPid === pid))
})

t.test('a child that cannot start: the error says so, and restarts back off', async (t) => {
  const { pool } = poolFor(t, { env: { FIXTURE_CRASH_ON_START: '1' } }, { backoff: { initialMs: 200, maxMs: 400, resetMs: 60_000 } })
  const first = await connect(t, pool, { session: 'a' }).catch((error: unknown) => error)
  t.match(first, { name: 'TransportError', message: /could not start: .*exited with code 1/ })
  const second = await connect(t, pool, { session: 'b' }).catch((error: unknown) => error)
  t.match(second, { name: 'TransportError', message: /could not start/ }, 'a restart due soon is waited for, and fails cleanly too')
  const slow = poolFor(t, { env: { FIXTURE_CRASH_ON_START: '1' } }, { backoff: { initialMs: 3000, maxMs: 6000, resetMs: 60_000 } }).pool
  await connect(t, slow, { session: 'a' }).catch(() => undefined)
  const refused = await connect(t, slow, { session: 'b' }).catch((error: unknown) => error)
  t.match(refused, { message: /next start in/ }, 'one further off is refused at once')
  const missing = poolFor(t, { command: ['/nonexistent/server'] }).pool
  const third = await connect(t, missing, { session: 'c' }).catch((error: unknown) => error)
  t.match(third, { name: 'TransportError', message: /could not start \/nonexistent\/server: .*ENOENT/ })
})

t.test('a child that stops answering pings is replaced', async (t) => {
  const { pool, logs } = poolFor(t, { pool: { ping_interval: 0.2, ping_timeout: 0.3 } })
  const client = await connect(t, pool, { session: 'a' })
  const family = answer<Family>(await client.callTool('grandchild'))
  const started = Date.now()
  const hung = await client.callTool('hang').catch((error: unknown) => error)
  t.match(hung, { name: 'TransportError', message: /did not answer a ping within 0.3 s/ }, 'the request in flight fails cleanly')
  t.ok(Date.now() - started < 2000)
  await eventually(() => !alive(family.pid) && !alive(family.grandchild), 3000)
  t.pass('the hung child and its group are gone')
  await sleep(150) // the first failure's backoff
  const next = answer<Echo>(await client.callTool('echo', { marker: 'fresh' }))
  t.not(next.pid, family.pid, 'a new child serves the session')
  t.ok(logs.some((line) => line.msg === 'stdio upstream child lost' && line.childPid === family.pid))
})

t.test('malformed JSON, an oversize line and answers to unknown ids disturb no session', async (t) => {
  const { pool, logs } = poolFor(t, { pool: { max: 1 }, max_message_size: 64 * 1024 })
  const a = await connect(t, pool, { session: 'a' })
  const b = await connect(t, pool, { session: 'b' })
  const waiting = b.callTool('echo', { marker: 'b', delay: 200 })
  const junk = answer<Echo>(await a.callTool('junk', { marker: 'a', oversize: 100 * 1024 }))
  t.equal(junk.marker, 'a', 'the session whose call produced the junk gets its answer')
  t.equal(answer<Echo>(await waiting).marker, 'b', 'the other session too')
  const warnings = logs.filter((line) => line.level === 40).map((line) => line.msg)
  t.ok(warnings.includes('stdio upstream wrote a line that is not JSON; dropped'))
  t.ok(warnings.includes('stdio upstream sent a JSON value that is not a message; dropped'))
  t.equal(warnings.filter((msg) => msg === 'stdio upstream sent an answer to an unknown id; dropped').length, 3, 'unknown number, unknown string, null id')
  t.ok(warnings.includes('stdio upstream wrote a line over max_message_size; dropped'))
  t.equal(pool.status().length, 1, 'the child keeps running')
  for (let i = 0; i < 4; i++) await a.callTool('junk', { marker: 'a', oversize: 100 * 1024 })
  t.equal(logs.filter((line) => line.level === 40).length, 20, 'a flood of junk is logged 20 times a minute, not more')
})

t.test('stderr lines reach the log with the upstream name, long ones truncated', async (t) => {
  const { pool, logs } = poolFor(t, { env: { FIXTURE_STDERR_LONG: '5000' } })
  const client = await connect(t, pool, { session: 'a' })
  const pid = answer<Echo>(await client.callTool('echo', { marker: 'x' })).pid
  await eventually(() => logs.some((line) => line.truncated === true))
  const started = logs.find((line) => line.stderr === `echo-fixture started ${pid}`)
  t.match(started, { upstream: 'echo', childPid: pid, level: 30 })
  const long = logs.find((line) => line.truncated === true)!
  t.equal(long.stderr?.length, STDERR_LINE_MAX)
  t.equal(long.bytes, 5000)
})

t.test('a write that meets a closed stdin says how the process ended, when it ends within a moment', async (t) => {
  // A child exiting at once races the pool's initialize: the write may fail (EPIPE) before the exit
  // is known, and the error must still say "exited with code …" (seen in a fresh-clone run).
  // The shell says on stderr when its stdin is closed (a fixed wait was too short for a loaded machine's start).
  let closed = false
  const log = pino({ level: 'info' }, { write: (line: string) => void (closed ||= line.includes('stdin closed')) })
  const child = await StdioChildProcess.start({ command: ['sh', '-c', 'exec 0<&-; echo stdin closed >&2; sleep 0.3; exit 7'], env: { PATH: process.env.PATH ?? '' }, cwd: process.cwd(), maxMessageSize: 1 << 20, log })
  t.teardown(() => child.stop(100))
  await eventually(() => closed, 5000)
  const failed = await child.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n', 5_000).then(() => undefined, (error: unknown) => error)
  t.match(failed, { message: /writing to the process failed: .*EPIPE.*: the process exited with code 7/ })
})
