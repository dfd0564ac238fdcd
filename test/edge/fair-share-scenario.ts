/**
 * A full route's fair share (issue 26: 100 addresses × 100 sessions filled max_sessions and every
 * fresh client got 503 for the idle lifetime), told once and run on each backend: three clients
 * (addresses behind a trusted proxy) fill `max_sessions` 20; a fresh client gets a session by ending
 * the least recently used idle session of the heaviest client, never one with a request in flight;
 * a client at its share still gets 503 with Retry-After.
 */
import type { Test } from 'tap'
import { RECLAIM_IDLE_MS } from '../../gateway/store/limiter.ts'

/** The route the scenario needs (`handler`: a module serving live.ts's `slow` tool). */
export const fairShareRoute = (handler: string) => ({
  location: '/fair', handler, server: { name: 'fair', version: '1.0.0' }, max_sessions: 20, read_timeout: 120,
  limits: { sessions_per_principal: 10 },
})

const VERSION = '2025-11-25'
const headersOf = (from: string, session?: string) => ({
  'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': from, 'mcp-protocol-version': VERSION,
  ...(session === undefined ? {} : { 'mcp-session-id': session }),
})

function initialize(url: string, from: string): Promise<Response> {
  return fetch(url, {
    method: 'POST', headers: headersOf(from),
    body: JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'fair', version: '1' } } }),
  })
}

/** A session from `from`, initialized; throws when refused. */
async function open(url: string, from: string): Promise<string> {
  const answer = await initialize(url, from)
  await answer.text()
  if (answer.status !== 200) throw new Error(`initialize from ${from}: ${answer.status}`)
  const id = answer.headers.get('mcp-session-id')!
  const sent = await fetch(url, { method: 'POST', headers: headersOf(from, id), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  await sent.text()
  return id
}

async function ping(url: string, from: string, session: string): Promise<number> {
  const answer = await fetch(url, { method: 'POST', headers: headersOf(from, session), body: JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }) })
  await answer.text()
  return answer.status
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function fairShareScenario(t: Test, base: () => string): Promise<unknown> {
  return t.test('a full route makes room for a client under its fair share, never ending a busy session', async (t) => {
    const url = `${base()}/fair`
    const [a, b, c] = ['198.51.100.1', '198.51.100.2', '198.51.100.3']
    const heavy: string[] = []
    for (let n = 0; n < 10; n++) heavy.push(await open(url, a))
    for (let n = 0; n < 9; n++) await open(url, b)
    await open(url, c)
    // heavy[0] has a request in flight for the whole scenario (600 steps of 40 ms).
    const busy = fetch(url, { method: 'POST', headers: headersOf(a, heavy[0]), body: JSON.stringify({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'slow', arguments: { steps: 600 } } }) })

    const early = await initialize(url, '198.51.100.4')
    t.equal(early.status, 503, `a session used within ${RECLAIM_IDLE_MS} ms is not ended: full`)
    t.equal(early.headers.get('retry-after'), '10')
    t.match(await early.json(), { id: 'init', error: { message: /max_sessions/ } })

    await sleep(RECLAIM_IDLE_MS + 1500)
    t.equal(await ping(url, a, heavy[2]!), 200, 'heavy[2] used again: no longer among the least recently used')

    const fresh = await initialize(url, '198.51.100.4')
    t.equal(fresh.status, 200, 'a fresh client gets a session at a full route')
    t.ok(fresh.headers.get('mcp-session-id'))
    await fresh.text()
    t.equal(await ping(url, a, heavy[1]!), 404, "the heaviest client's least recently used idle session ended: 404, the client re-initializes")
    t.equal(await ping(url, a, heavy[0]!), 200, 'the session with a request in flight (older still) lives')
    t.equal(await ping(url, a, heavy[2]!), 200, 'a recently used session lives')

    for (const [who, from] of [['the heaviest client', a], ['a client at its share', b]] as const) {
      const more = await initialize(url, from)
      t.equal(more.status, 503, `${who} asking for one more is refused`)
      t.equal(more.headers.get('retry-after'), '10')
      await more.text()
    }

    // Seven more fresh clients: each gets a session, each ends an idle one of the heaviest.
    for (let n = 5; n < 12; n++) {
      const answer = await initialize(url, `198.51.100.${n}`)
      t.equal(answer.status, 200, `fresh client .${n} gets a session`)
      await answer.text()
    }
    t.equal(await ping(url, a, heavy[0]!), 200, 'the busy session still lives')

    const answer = await busy
    t.equal(answer.status, 200)
    t.match(await answer.text(), /done after 600 steps/, 'the request in flight finished on its session')
  })
}
