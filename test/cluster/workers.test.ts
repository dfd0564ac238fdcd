// `workers: 2` on one host: the node:cluster primary holds the sessions (the cluster store, the default
// when workers > 1) and deals connections to its workers in turn. Every request below goes through a
// forwarder that opens a fresh connection per request, so consecutive requests reach different workers.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { sessionHash } from '../../gateway/log/redact.ts'
import { SseReader } from '../e2e/sse-reader.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { nonStickySession } from './non-sticky.ts'
import { roundRobin, type RoundRobin } from './round-robin.ts'

// A primary and two workers start slowly (each compiles its TypeScript): more than tap's 30 s.
t.setTimeout(180_000)

const headers = (sessionId?: string): Record<string, string> => {
  const all: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
  if (sessionId !== undefined) all['mcp-session-id'] = sessionId
  return all
}

function post(balancer: RoundRobin, sessionId: string | undefined, body: object, signal?: AbortSignal): Promise<Response> {
  return fetch(`${balancer.url}/live`, { method: 'POST', headers: headers(sessionId), body: JSON.stringify(body), signal })
}

async function session(balancer: RoundRobin): Promise<string> {
  const response = await post(balancer, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  await response.text()
  const sessionId = response.headers.get('mcp-session-id')!
  await (await post(balancer, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' })).text()
  return sessionId
}

/** The pid of the worker this request reached. */
async function whoami(balancer: RoundRobin, sessionId: string): Promise<number> {
  const answer = (await (await post(balancer, sessionId, { jsonrpc: '2.0', id: 'who', method: 'tools/call', params: { name: 'whoami' } })).json()) as { result: { content: Array<{ text: string }> } }
  return (JSON.parse(answer.result.content[0]!.text) as { pid: number }).pid
}

const gateway: GatewayProcess = await startGatewayProcess(t, { workers: 2, drain_timeout: 3, routes: [liveRoute] }, 2)
const workerPids = (): number[] => gateway.logs.filter((line) => line.msg === 'mcp-edge listening').map((line) => line.pid as number)

t.test('the primary says what it runs', async (t) => {
  t.match(await gateway.logged((line) => line.msg === 'mcp-edge primary started'), { role: 'primary', workers: 2, store: 'cluster' })
  t.equal(new Set(workerPids()).size, 2, 'two workers listen on the shared port')
})

t.test('a whole session over two workers, request by request alternating', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  await nonStickySession(t, { balancer, processes: 2 })
})

t.test('one scrape of /metrics covers both workers: requests summed, the shared session count not', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  const scrape = async (): Promise<string> => (await fetch(`${balancer.url}/metrics`)).text()
  const value = (text: string, line: string): number => Number(text.split('\n').find((entry) => entry.startsWith(`${line} `))?.slice(line.length + 1) ?? 0)
  const calls = 'mcp_edge_requests_total{route="/live",method="tools/call",status="200"}'
  const sessions = 'mcp_edge_sessions{route="/live"}'

  const before = await scrape()
  const sessionId = await session(balancer)
  const pids = new Set<number>()
  for (let n = 0; n < 6; n++) pids.add(await whoami(balancer, sessionId))
  t.equal(pids.size, 2, 'the calls reached both workers')
  for (let n = 0; n < 2; n++) {
    const after = await scrape() // each scrape reaches the next worker
    t.equal(value(after, calls) - value(before, calls), 6, 'every call counted once, whichever worker served it and whichever answers the scrape')
    t.equal(value(after, sessions) - value(before, sessions), 1, 'one new session, not one per worker')
  }
})

t.test('a POST stream cut after event k resumes on the other worker with exactly k+1…, in order, once', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  const sessionId = await session(balancer)
  const cut = new AbortController()
  const response = await post(balancer, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 10 }, _meta: { progressToken: 'p' } } }, cut.signal)
  const reader = new SseReader(response)
  await reader.next() // priming
  await reader.next()
  const k = (await reader.next())!
  t.equal(JSON.parse(k.data).params.progress, 2)
  cut.abort()
  // Connections alternate between the workers: after the stream's, one probe reaches the other worker
  // and the next the producer, so the resume that follows reaches the other worker again.
  const other = await whoami(balancer, sessionId)
  const producer = await whoami(balancer, sessionId)
  t.not(other, producer, 'connections alternate between the two workers')

  const resumed = await fetch(`${balancer.url}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': k.id! } })
  t.equal(resumed.status, 200)
  const events = await new SseReader(resumed).rest()
  const messages = events.map((event) => JSON.parse(event.data))
  t.same(messages.slice(0, -1).map((message) => message.params.progress), [3, 4, 5, 6, 7, 8, 9, 10], 'the missed events, then the live ones: in order, once')
  t.match(messages.at(-1), { id: 7, result: { content: [{ text: 'done after 10 steps' }] } })
  const served = await gateway.logged((line) => line.msg === 'mcp request' && line.sessionId === sessionHash(sessionId) && line.method === 'tools/call' && line.status === 200 && line.pid === producer, 5000)
  t.equal(served.pid, producer, 'the stream was produced by the worker the probes named')
  t.equal(await whoami(balancer, sessionId), producer, 'and the resume was served by the other one')
})

t.test('the worker that created a session dies by SIGKILL: the session goes on, and the worker is replaced', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  const sessionId = await session(balancer)
  const created = await gateway.logged((line) => line.msg === 'mcp request' && line.sessionId === sessionHash(sessionId) && line.method === 'initialize')
  const creator = created.pid as number
  process.kill(creator, 'SIGKILL')
  const died = await gateway.logged((line) => line.role === 'primary' && line.workerPid === creator)
  t.match(died, { level: 50, signal: 'SIGKILL', msg: /worker killed by SIGKILL; starting a new one/ }, 'the primary says why the worker died')
  for (let n = 0; n < 3; n++) {
    const pid = await whoami(balancer, sessionId)
    t.not(pid, creator, `request ${n + 1} with the same session id served by another worker`)
  }
  await gateway.logged(() => workerPids().length === 3)
  const pids = new Set<number>()
  for (let n = 0; n < 4; n++) pids.add(await whoami(balancer, sessionId))
  t.equal(pids.size, 2, 'the replacement serves the session too')
})

t.test('a stateless request whose rounds land on different workers completes (one requestState key)', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }
  const call = async (id: number, extra: object = {}) => {
    const response = await fetch(`${balancer.url}/live`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ask' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { _meta: meta, name: 'ask', ...extra } }),
    })
    return (await response.json()) as { result: { resultType: string; inputRequests: Record<string, unknown>; requestState: string; content: Array<{ text: string }> } }
  }
  for (let round = 0; round < 4; round++) {
    const first = (await call(1)).result
    t.equal(first.resultType, 'input_required')
    const key = Object.keys(first.inputRequests)[0]!
    const done = (await call(2, { inputResponses: { [key]: { action: 'accept', content: { name: 'Ines' } } }, requestState: first.requestState })).result
    t.same([done.resultType, done.content[0]!.text], ['complete', 'Hello, Ines'], `round pair ${round}`)
  }
})

t.test('SIGTERM: SSE streams end with a retry hint, requests in flight finish, the primary exits 0', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  const sessionId = await session(balancer)
  const streaming = await post(balancer, sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { steps: 15 }, _meta: { progressToken: 'p' } } })
  const reader = new SseReader(streaming)
  await reader.next() // priming
  const plain = post(balancer, sessionId, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { steps: 10 } } })
  await sleep(100)
  const exit = gateway.stop('SIGTERM')
  const rest = await reader.rest()
  t.ok(rest.some((event) => event.retry !== undefined && event.data === ''), 'the stream ended early with a retry field, for a reconnect elsewhere')
  t.notOk(rest.some((event) => JSON.parse(event.data || '{}').id === 1), 'before its response')
  const answer = await plain
  t.equal(answer.status, 200, 'the request in flight got its answer')
  t.match(await answer.json(), { id: 2, result: { content: [{ text: 'done after 10 steps' }] } })
  t.equal(await exit, 0, 'the primary exits 0')
  t.ok(gateway.logs.some((line) => line.msg === 'draining'), 'the workers drained')
})
