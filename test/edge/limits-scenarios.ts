// Rate limits and quotas as a client sees them, written once and run in one process, across two
// workers (cluster store) and across two hosts (Redis): `base` is a gateway, or a round-robin
// forwarder in front of several, so consecutive requests land on different workers or hosts.
import type { Test } from 'tap'
import { livePid } from '../cluster/gateway-process.ts'

/** Routes with one kind of limit each, so the scenarios do not count each other's requests. */
export const limitRoutes = [
  { location: '/rate', handler: livePid, server: { name: 'rate', version: '1.0.0' }, limits: { rate: [{ key: 'ip', limit: 5, window: 60 }] } },
  { location: '/tool', handler: livePid, server: { name: 'tool', version: '1.0.0' }, limits: { rate: [{ key: 'principal', tool: 'who*', limit: 3, window: 60 }] } },
  { location: '/quota', handler: livePid, server: { name: 'quota', version: '1.0.0' }, limits: { sessions_per_principal: 2, concurrent_requests_per_session: 2 } },
]

/** Ends a session. */
async function end(url: string, sessionId: string): Promise<number> {
  const response = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } })
  await response.text()
  return response.status
}

const headers = (sessionId?: string): Record<string, string> => {
  const all: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
  if (sessionId !== undefined) all['mcp-session-id'] = sessionId
  return all
}

export function post(url: string, sessionId: string | undefined, body: object): Promise<Response> {
  return fetch(url, { method: 'POST', headers: headers(sessionId), body: JSON.stringify(body) })
}

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } }

/** Opens a session (initialize, initialized): two requests. */
export async function session(url: string): Promise<string> {
  const response = await post(url, undefined, initialize)
  await response.text()
  const sessionId = response.headers.get('mcp-session-id')
  if (sessionId === null) throw new Error(`initialize refused: ${response.status}`)
  await (await post(url, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' })).text()
  return sessionId
}

type Answer = { jsonrpc: string; id: unknown; result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ text: string }> }; error?: { code: number; message: string; data?: Record<string, unknown> } }

/**
 * `processes`: how many gateway processes `base` deals requests to in turn. Rates and sessions per
 * principal are shared by all; requests in flight are counted by each process for itself.
 */
export function limitScenarios(t: Test, base: () => string, processes = 1): void {
  t.test('a transport-level rule: exactly the limit passes, the rest get 429 + Retry-After + a JSON-RPC error with their id', async (t) => {
    const url = `${base()}/rate`
    const sessionId = await session(url) // 2 of 5
    const statuses: number[] = []
    for (let id = 1; id <= 6; id++) {
      const response = await post(url, sessionId, { jsonrpc: '2.0', id, method: 'ping' })
      statuses.push(response.status)
      const answer = (await response.json()) as Answer
      t.equal(answer.id, id, `answer ${id} carries its request's id`)
      if (response.status !== 429) continue
      const retryAfter = Number(response.headers.get('retry-after'))
      t.ok(retryAfter >= 1 && retryAfter <= 12, `Retry-After ${retryAfter} s: within one interval (60 s / 5)`)
      t.match(answer.error, { code: -32000, message: /Too Many Requests/, data: { retryAfterMs: Number, limit: 5, scope: 'requests per client address per 60 s' } })
    }
    t.same(statuses, [200, 200, 200, 429, 429, 429], '5 requests in the window (initialize, initialized and 3 pings), then 429')
    const stream = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } })
    t.equal(stream.status, 429, 'a GET counts too')
    await stream.body?.cancel()
  })

  t.test('a per-tool rule: the calls over it get an isError result the model can act on; other tools and methods pass', async (t) => {
    const url = `${base()}/tool`
    const sessionId = await session(url)
    const results: Answer[] = []
    for (let id = 1; id <= 5; id++) {
      const response = await post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami' } })
      t.equal(response.status, 200, 'a tool limit is a result, not an HTTP refusal')
      results.push((await response.json()) as Answer)
    }
    t.same(results.map((answer) => answer.result?.isError ?? false), [false, false, false, true, true], 'exactly 3 calls pass')
    const over = results[3]!
    t.equal(over.id, 4)
    t.match(over.result!.structuredContent, { retryAfterMs: Number, limit: 3, scope: 'tools/call of "who*" per principal per 60 s' })
    const wait = over.result!.structuredContent!.retryAfterMs as number
    t.ok(wait > 0 && wait <= 20_000, `retryAfterMs ${wait}: within one interval (60 s / 3)`)
    t.match(over.result!.content[0]!.text, /try again in \d+ s/, 'the text tells the model when to try again')
    const other = await (await post(url, sessionId, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'levels' } })).text()
    t.match(other, /"result":\{"content":\[\{"type":"text","text":"logged"\}\]\}/, 'a tool the rule does not match is not counted')
    const list = await post(url, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/list' })
    t.equal(list.status, 200, 'nor is another method')
    await list.text()
  })

  t.test('sessions_per_principal: a client (an address on an open route) gets 2 sessions; the third is refused until one ends', async (t) => {
    const url = `${base()}/quota`
    const first = await session(url)
    const second = await session(url)
    const refused = await post(url, undefined, { ...initialize, id: 'third' })
    t.equal(refused.status, 429)
    t.equal(refused.headers.get('mcp-session-id'), null, 'no session id')
    t.match(await refused.json(), { id: 'third', error: { code: -32000, message: /already has 2 sessions.*sessions_per_principal/ } })
    t.equal(await end(url, first), 200)
    const third = await session(url)
    t.type(third, 'string', 'one ended: a new one is admitted')
    // Leave the address's quota free for the next scenario.
    for (const id of [second, third]) await end(url, id)
  })

  t.test(`concurrent_requests_per_session: 2 in flight on a session per process (${processes}), one more is refused with its id, later ones pass`, async (t) => {
    const url = `${base()}/quota`
    const sessionId = await session(url)
    const slow = (id: number) => post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { steps: 25 } } })
    // One at a time, so a round-robin balancer deals them to the processes in turn: 2 on each.
    const running: Array<Promise<Response>> = []
    for (let id = 1; id <= 2 * processes; id++) {
      running.push(slow(id))
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    const extra = 2 * processes + 1
    const refused = await slow(extra)
    t.equal(refused.status, 429)
    t.match(await refused.json(), { id: extra, error: { code: -32000, message: /already has 2 requests in flight.*concurrent_requests_per_session/, data: { limit: 2 } } })
    const done = await Promise.all(running.map(async (response) => (await (await response).text()).includes('done after 25 steps')))
    t.same(done, running.map(() => true), 'the ones in flight finish')
    const after = await post(url, sessionId, { jsonrpc: '2.0', id: extra + 1, method: 'tools/call', params: { name: 'whoami' } })
    t.equal(after.status, 200, 'their slots were given back')
    await after.text()
  })
}

