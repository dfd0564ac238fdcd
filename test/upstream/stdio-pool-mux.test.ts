// The stdio pool's multiplexing against real children of the echo fixture: many sessions over few
// children with the same JSON-RPC ids, and nothing crosses: answers, progress, cancellations,
// notifications, server→client requests; `session` and `principal` isolation.
import t from 'tap'
import { RpcError, type McpClient } from '../../gateway/client/index.ts'
import { answer, alive, connect, eventually, poolFor, sleep } from './stdio-harness.ts'

interface Echo { marker: string; id: number; pid: number }

t.test('200 sessions over 2 children with overlapping ids: 0 cross-talk', async (t) => {
  const { pool } = poolFor(t, { pool: { max: 2 } })
  const sessions = 200
  const clients = await Promise.all(Array.from({ length: sessions }, (_, i) => connect(t, pool, { session: `s${i}` }, {}, 30_000)))
  const status = pool.status()
  t.equal(status.length, 2, 'two children')
  t.same(status.map((child) => child.sessions).sort(), [100, 100], 'sessions spread evenly')

  // Every client numbers its requests from 1, so each id is in flight for 200 sessions at once.
  let mixed = 0
  let answered = 0
  let progressMixed = 0
  let progressHeard = 0
  const childIds = new Map<number, Set<number>>()
  await Promise.all(
    clients.map(async (client, i) => {
      const calls = Array.from({ length: 4 }, async (_, k) => {
        const marker = `s${i}-c${k}`
        const result = answer<Echo>(await client.callTool('echo', { marker, delay: (i * 7 + k * 13) % 25 }))
        answered++
        if (result.marker !== marker) mixed++
        const seen = childIds.get(result.pid) ?? new Set()
        if (seen.has(result.id)) mixed++ // two requests under one id at the child would be cross-talk waiting to happen
        seen.add(result.id)
        childIds.set(result.pid, seen)
      })
      const progressMarker = `s${i}-p`
      const progress = client.callTool('progress', { marker: progressMarker, steps: 3 }, {
        onProgress: (_value, _total, message) => {
          progressHeard++
          if (message !== progressMarker) progressMixed++
        },
      })
      await Promise.all([...calls, progress])
    }),
  )
  t.equal(answered, sessions * 4, 'every call answered')
  t.equal(mixed, 0, 'every answer reached the session that asked, under a distinct child id')
  t.equal(progressHeard, sessions * 3, 'every progress notification arrived')
  t.equal(progressMixed, 0, 'every progress notification reached its own session')

  const stats = await Promise.all([clients[0]!, clients[1]!].map(async (client) => answer<{ initializes: number; pid: number }>(await client.callTool('stats'))))
  t.not(stats[0]!.pid, stats[1]!.pid, 'the two sessions are on different children')
  t.same(stats.map((s) => s.initializes), [1, 1], 'each child was initialized once, by the pool')
})

t.test('a cancellation reaches exactly the request it names', async (t) => {
  const { pool } = poolFor(t, { pool: { max: 1 } })
  const a = await connect(t, pool, { session: 'a' })
  const b = await connect(t, pool, { session: 'b' })
  const abort = new AbortController()
  // Both are request 2 of their client (initialize was 1).
  const first = a.callTool('echo', { marker: 'a', delay: 400 }, { signal: abort.signal }).catch((error: unknown) => error)
  const second = b.callTool('echo', { marker: 'b', delay: 400 })
  await sleep(50)
  abort.abort('changed my mind')
  t.match(await first, { name: 'CancelledError' })
  const fromB = answer<Echo>(await second)
  t.equal(fromB.marker, 'b', 'the other session with the same id is answered')
  const stats = answer<{ cancelled: number[] }>(await b.callTool('stats'))
  t.equal(stats.cancelled.length, 1, 'one cancellation reached the child')
  t.not(stats.cancelled[0], fromB.id, 'and not for the other session')
})

t.test('list_changed and log messages reach every session; resources/updated only its subscribers', async (t) => {
  const { pool } = poolFor(t, { pool: { max: 1 } })
  const heard = new Map<string, string[]>()
  const note = (who: string, what: string): void => void heard.set(who, [...(heard.get(who) ?? []), what])
  const clients: McpClient[] = []
  for (const who of ['a', 'b', 'c']) {
    clients.push(
      await connect(t, pool, { session: who }, { on: { toolsListChanged: () => note(who, 'tools'), log: (message) => note(who, `log:${String(message.data)}`) } }),
    )
  }
  const [a, b, c] = clients as [McpClient, McpClient, McpClient]
  await a.callTool('notify', { marker: 'hello' })
  await eventually(() => ['a', 'b', 'c'].every((who) => heard.get(who)?.length === 2))
  for (const who of ['a', 'b', 'c']) t.same(heard.get(who)?.sort(), ['log:hello', 'tools'], `${who} heard both`)

  const updated: string[] = []
  await a.subscribeResource('demo://x', (uri) => updated.push(`a:${uri}`))
  await b.subscribeResource('demo://x', (uri) => updated.push(`b:${uri}`))
  await c.callTool('update', { uri: 'demo://x' })
  await eventually(() => updated.length === 2)
  t.same(updated.sort(), ['a:demo://x', 'b:demo://x'], 'the two subscribers heard it, c did not')

  await a.unsubscribeResource('demo://x')
  let stats = answer<{ subscriptions: string[] }>(await c.callTool('stats'))
  t.same(stats.subscriptions, ['demo://x', 'demo://x'], 'the child keeps the subscription b still needs')
  updated.length = 0
  await c.callTool('update', { uri: 'demo://x' })
  await eventually(() => updated.length === 1)
  t.same(updated, ['b:demo://x'])
  await b.close()
  stats = answer<{ subscriptions: string[] }>(await c.callTool('stats'))
  t.same(stats.subscriptions, [], 'the last subscriber closing unsubscribes at the child')
})

t.test('a server→client request goes to the session whose call may have asked, else an error', async (t) => {
  const { pool } = poolFor(t, { pool: { max: 1 } })
  const sampler = (who: string) => ({ sampling: () => ({ role: 'assistant' as const, content: { type: 'text' as const, text: `from ${who}` }, model: 'm' }) })
  const a = await connect(t, pool, { session: 'a' }, sampler('a'))
  const b = await connect(t, pool, { session: 'b' }, sampler('b'))
  const plain = await connect(t, pool, { session: 'plain' })

  const alone = answer<{ answer: { result: { content: { text: string } } } }>(await b.callTool('sample', { marker: 'q' }))
  t.equal(alone.answer.result.content.text, 'from b', 'the only session in flight answers')

  // a's echo is a tool not yet seen to answer without asking: b's call that may ask waits for it.
  let slowDone = 0
  const slow = a.callTool('echo', { marker: 'a', delay: 300 }).then((result) => ((slowDone = Date.now()), result))
  await sleep(20)
  const queued = answer<{ answer: { result: { content: { text: string } } } }>(await b.callTool('sample', { marker: 'q' }))
  t.equal(queued.answer.result.content.text, 'from b', 'two sessions with calls that may ask: the second waits, then is asked itself')
  t.ok(slowDone > 0, 'b\'s call went after a\'s had ended')
  t.equal(answer<Echo>(await slow).marker, 'a')

  // echo has now answered alone without asking: it runs freely beside b's call, which is the one asked.
  let echoDone = 0
  const quiet = a.callTool('echo', { marker: 'a2', delay: 300 }).then((result) => ((echoDone = Date.now()), result))
  await sleep(20)
  const beside = answer<{ answer: { result: { content: { text: string } } } }>(await b.callTool('sample', { marker: 'q' }))
  t.equal(beside.answer.result.content.text, 'from b', 'the one session with a call that may ask is asked')
  t.equal(echoDone, 0, 'while a\'s quiet call was still in flight')
  await quiet

  const undeclared = answer<{ answer: { error: { code: number } } }>(await plain.callTool('sample', { marker: 'q' }))
  t.equal(undeclared.answer.error.code, -32601, 'a client without the sampling capability is not asked')
})

t.test('session isolation: a child per session, initialized with that client\'s own capabilities', async (t) => {
  const { pool } = poolFor(t, { isolation: 'session' })
  const a = await connect(t, pool, { session: 'a' }, { roots: [] })
  const b = await connect(t, pool, { session: 'b' }, { sampling: () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }) })
  t.same(JSON.parse(a.server!.instructions!), { roots: { listChanged: true } }, 'a\'s child saw a\'s capabilities')
  t.same(JSON.parse(b.server!.instructions!), { sampling: {} }, 'b\'s child saw b\'s capabilities')
  const pidA = answer<Echo>(await a.callTool('echo', { marker: 'a' })).pid
  const pidB = answer<Echo>(await b.callTool('echo', { marker: 'b' })).pid
  t.not(pidA, pidB)
  await a.close()
  await eventually(() => !alive(pidA))
  t.ok(alive(pidB), 'closing a session stops its child only')
  t.equal(pool.status().length, 1)
})

t.test('session isolation: a session resumed on another worker gets a child with its own handshake', async (t) => {
  // A second pool is what another worker has: the client there resumes without an initialize.
  const { pool } = poolFor(t, { isolation: 'session' })
  const initialize = { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'downstream', version: '1' } }
  const transport = pool.transportFor({ session: 'a', initialize })
  const answers: unknown[] = []
  transport.onmessage = (message) => void answers.push(message)
  t.teardown(() => transport.close())
  await transport.start()
  await transport.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'stats' } })
  await eventually(() => answers.length === 1)
  const [reply] = answers as Array<{ id: number; result: { content: Array<{ text: string }> } }>
  t.equal(reply!.id, 7, 'answered under the session\'s id')
  const stats = JSON.parse(reply!.result.content[0]!.text) as { initializes: number; capabilities: unknown }
  t.same(stats.capabilities, initialize.capabilities, 'the child was initialized with the session\'s own params')
  t.equal(stats.initializes, 1)
})

t.test('principal isolation: one child per principal, shared by its sessions', async (t) => {
  const { pool } = poolFor(t, { isolation: 'principal' })
  const pids: number[] = []
  for (const [session, principal] of [['1', 'alice'], ['2', 'alice'], ['3', 'bob']] as const) {
    const client = await connect(t, pool, { session, principal })
    pids.push(answer<Echo>(await client.callTool('echo', { marker: session })).pid)
  }
  t.equal(pids[0], pids[1], 'alice\'s sessions share a child')
  t.not(pids[0], pids[2], 'bob has his own')
})

t.test('pool.max bounds the children of session isolation', async (t) => {
  const { pool } = poolFor(t, { isolation: 'session', pool: { max: 1 } })
  await connect(t, pool, { session: 'a' })
  const refused = await connect(t, pool, { session: 'b' }).catch((error: unknown) => error)
  t.match(refused, { name: 'TransportError', message: /pool\.max/ })
  t.notOk(refused instanceof RpcError)
})

t.test('sessions placed on the warm child while others start move to them once ready, when idle', async (t) => {
  const { pool } = poolFor(t, { pool: { max: 3 } }, { settleMs: 0 })
  await pool.warm()
  const clients = await Promise.all(Array.from({ length: 9 }, (_, i) => connect(t, pool, { session: `s${i}` })))
  t.same(pool.status().filter((child) => child.state === 'ready').map((child) => child.sessions), [9], 'at first every session is on the one ready child')
  await eventually(() => pool.status().filter((child) => child.state === 'ready').length === 3, 10_000)
  for (const client of clients) await client.callTool('echo', { marker: 'x' })
  t.same(pool.status().map((child) => child.sessions).sort(), [3, 3, 3], 'the next requests spread them')
  const pids = new Set(await Promise.all(clients.map(async (client) => answer<Echo>(await client.callTool('echo', { marker: 'y' })).pid)))
  t.equal(pids.size, 3, 'answered by three children')
})

t.test('a new child takes sessions only once settled: a server still applying its roots refuses none of them', async (t) => {
  // Each child applies the pool's roots 300 ms after it is told them; a session moved to a child that
  // has not would be refused what its old child served.
  const { pool } = poolFor(t, { roots: ['/srv/shared'], pool: { max: 2 }, env: { FIXTURE_ROOTS_AFTER_MS: '300' } }, { settleMs: 1000 })
  await pool.warm()
  const first = await connect(t, pool, { session: 'a' })
  await eventually(async () => (await first.callTool('roots', {})).isError !== true, 5_000)
  // Three more sessions: a second child starts for them while the warm one serves them.
  const others = await Promise.all(['b', 'c', 'd'].map((session) => connect(t, pool, { session })))
  const refused: string[] = []
  const pids = new Set<number>()
  const until = Date.now() + 2_500
  while (Date.now() < until) {
    for (const client of [first, ...others]) {
      const result = await client.callTool('roots', {})
      if (result.isError === true) refused.push((result.content[0] as { text: string }).text)
      else pids.add(answer<{ pid: number }>(result).pid)
    }
    await sleep(20)
  }
  t.same(refused, [], 'no call refused while a child was applying its roots')
  t.equal(pids.size, 2, 'the sessions did spread to the second child once it had settled')
})
