/**
 * Store outages inside handlers, and writes answered as failed (issue 26), with a real redis-server
 * frozen by SIGSTOP (connections open, commands waiting in its input buffer, as in a long fork or a
 * network stall):
 * - `ctx.session.state.set` while Redis is frozen answered HTTP 200 with an `isError` "Tool setstate
 *   failed (ref …)"; it is now the gateway's failure like its own writes: 503, -32000, the request's id.
 * - a DELETE answered 503 while Redis was frozen was applied once Redis woke (the session ended after
 *   all), and so was a state write answered as failed: now neither takes effect later.
 * On the hot path's gateway and on Fastify's (`trust_proxy`) alike.
 */
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { startRedis, type RedisServer } from '../store/redis-server.ts'

t.setTimeout(180_000)
const HANDLER = fileURLToPath(new URL('../fixtures/handlers/state-writer.ts', import.meta.url))
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
const COMMAND_TIMEOUT_S = 0.5
const hooks = globalThis as { mcpEdgeBeforeStateWrite?: () => Promise<void> | void }

async function gatewayOn(t: Test, redis: RedisServer, top: object, prefix: string) {
  const gateway = await startGateway(configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    ...top,
    store: { type: 'redis', url: redis.url, key_prefix: prefix, command_timeout: COMMAND_TIMEOUT_S, connect_timeout: 1 },
    routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'state', version: '1.0.0' } }],
  }, '<test>'))
  t.teardown(() => gateway.close())
  // The store connects in the background: wait until the gateway says it is ready.
  for (let tries = 0; (await fetch(`${gateway.url}/readyz`).then((r) => r.status)) !== 200; tries++) {
    if (tries > 100) throw new Error('the gateway never became ready')
    await sleep(50)
  }
  const url = `${gateway.url}/mcp`
  const post = async (body: object, session?: string) => {
    const response = await fetch(url, { method: 'POST', headers: { ...HEADERS, ...(session === undefined ? {} : { 'mcp-session-id': session }) }, body: JSON.stringify(body) })
    return { status: response.status, headers: response.headers, body: await response.text() }
  }
  const open = async (): Promise<string> => {
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'outage', version: '1' } } })
    const session = init.headers.get('mcp-session-id')
    if (session === null) throw new Error(`initialize: ${init.status} ${init.body}`)
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)
    return session
  }
  const call = (session: string, id: number | string, name: string, args: object = {}) => post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, session)
  const stateOf = async (session: string): Promise<unknown> => {
    const answer = await call(session, 'get', 'getstate')
    return JSON.parse((JSON.parse(answer.body) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text)
  }
  return { gateway, url, post, open, call, stateOf }
}

/** `attempt` until it answers anything but 503 (the store not answering within command_timeout), at most five times. */
async function inTime<T extends { status: number }>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    const answer = await attempt()
    if (answer.status !== 503 || tries === 5) return answer
    await sleep(100)
  }
}

/** Freezes Redis for `ms` (in the background), and says when it is awake again. */
function freezeFor(redis: RedisServer, ms: number): Promise<void> {
  redis.freeze()
  return sleep(ms).then(() => redis.thaw())
}

for (const [way, top] of [['hot path', {}], ['Fastify', { trust_proxy: true }]] as const) {
  t.test(`${way}: a store outage inside a tool is 503, and writes answered as failed stay undone`, async (t) => {
    const redis = await startRedis(t)
    const { open, call, stateOf, url } = await gatewayOn(t, redis, top, `outage-${way === 'hot path' ? 'hot' : 'fastify'}:`)
    const session = await open()
    t.match(JSON.parse((await call(session, 1, 'setstate', { value: 'before' })).body), { result: { content: [{ text: 'state set to before' }] } }, 'Redis up: the state is written')

    // Redis freezes between the tool's read of the state and its write.
    let awake: Promise<void> | undefined
    hooks.mcpEdgeBeforeStateWrite = () => {
      awake = freezeFor(redis, 2500)
    }
    const during = await call(session, 'set-frozen', 'setstate', { value: 'during' })
    hooks.mcpEdgeBeforeStateWrite = undefined
    t.equal(during.status, 503, `state.set while Redis is frozen: HTTP 503 (${during.body})`)
    t.match(JSON.parse(during.body), { jsonrpc: '2.0', id: 'set-frozen', error: { code: -32000, message: 'Session store unavailable' } }, 'the error table\'s row with the request\'s id, not an isError result')
    t.notMatch(during.body, /isError|failed \(ref/, 'not a tool failure')
    await awake
    t.same(await stateOf(session), { value: 'before' }, 'Redis awake: the write answered as failed was not applied')

    // DELETE while Redis is frozen: 503, and the session is still there when Redis wakes.
    awake = freezeFor(redis, 2500)
    const deleted = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } })
    const deletedBody = await deleted.text()
    t.equal(deleted.status, 503, `DELETE while Redis is frozen: 503 (${deletedBody})`)
    await awake
    await sleep(200)
    const after = await call(session, 'after', 'getstate')
    t.equal(after.status, 200, 'Redis awake: the session answered as not deleted is still there')
    t.same(await stateOf(session), { value: 'before' }, 'with its state')

    // And when Redis answers in time, the same operations work. Each is tried again while it answers
    // 503 (which, as above, leaves nothing done): on a machine at load average 25 a command now and
    // then took longer than the 0.5 s command_timeout, and that 503 is the gateway being right.
    const set = await inTime(() => call(session, 2, 'setstate', { value: 'later' }))
    t.match(JSON.parse(set.body), { result: { content: [{ text: 'state set to later' }] } })
    t.same(await stateOf(session), { value: 'later' })
    const gone = await inTime(async () => {
      const response = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } })
      return { status: response.status, body: await response.text() }
    })
    t.equal(gone.status, 200, `a DELETE Redis answers ends the session (${gone.body})`)
    t.equal((await call(session, 3, 'getstate')).status, 404)
  })
}
