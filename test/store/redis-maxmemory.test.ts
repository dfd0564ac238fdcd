/**
 * On Redis the gateway keeps no session data of its own: Redis's `maxmemory` is the bound on what all
 * hosts' sessions and event logs hold together (README: Limits). This holds the gateway to its side
 * of that: with Redis full (`maxmemory-policy noeviction`), a new session is a clear 503 with
 * Retry-After and the request's id (never Redis's words, never a 500), sessions already open keep
 * working, and ending sessions makes room again. Real redis-server, real HTTP.
 */
import { Redis } from 'ioredis'
import t from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { startRedis } from './redis-server.ts'

t.setTimeout(120_000)

const initialize = (url: string, id: string, capabilities: object) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'x', version: '1' } } }),
  })

t.test('Redis at maxmemory: new sessions get 503 with Retry-After, open ones are served, ended ones make room', async (t) => {
  const redis = await startRedis(t)
  const admin = new Redis(redis.url)
  t.teardown(() => admin.quit())
  const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1])
  // About 3 MB of room: ~150 sessions of 16 KB capabilities.
  await admin.config('SET', 'maxmemory', String(used + 3 * 1024 * 1024))
  await admin.config('SET', 'maxmemory-policy', 'noeviction')
  const route = { location: '/s', handler: fixture('live'), server: { name: 's', version: '1.0.0' }, limits: { sessions_per_principal: 0 } }
  const gateway = await gatewayWith(t, [route], { store: { type: 'redis', url: redis.url, key_prefix: 'maxmem:' } })
  const url = `${gateway.url}/s`
  const capabilities = { experimental: { pad: 'c'.repeat(16_000) } }
  const sessions: string[] = []
  let refusal: Response | undefined
  for (let n = 0; n < 2000 && refusal === undefined; n++) {
    const answer = await initialize(url, `i${n}`, capabilities)
    if (answer.status === 200) {
      await answer.text()
      sessions.push(answer.headers.get('mcp-session-id')!)
    } else refusal = answer
  }
  t.ok(sessions.length > 50, `${sessions.length} sessions fitted before Redis was full`)
  t.ok(refusal !== undefined, 'then a new session was refused')
  t.equal(refusal!.status, 503)
  t.ok(Number(refusal!.headers.get('retry-after')) > 0, 'with Retry-After')
  const body = await refusal!.text()
  t.match(JSON.parse(body), { jsonrpc: '2.0', id: `i${sessions.length}`, error: { code: -32000 } })
  t.notMatch(body, /OOM|maxmemory|used memory/i, 'Redis\'s own words stay in the log')

  // An open session still works: its requests read, they do not grow Redis.
  const call = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessions[0]!, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'ping', method: 'ping' }),
  })
  t.equal(call.status, 200, 'an open session is served while Redis is full')
  await call.text()

  for (const id of sessions.slice(0, 20)) {
    const ended = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } })
    t.equal(ended.status, 200, 'DELETE works at maxmemory (it frees)')
    await ended.text()
  }
  const again = await initialize(url, 'again', capabilities)
  t.equal(again.status, 200, 'ended sessions made room for a new one')
  await again.text()
})
