/**
 * Slow clients all at once against one gateway process (issue 16, the resilience suite): SSE streams
 * and WebSockets that never read while a handler floods them, request bodies trickled a byte at a
 * time, and idle connections up to (and past) the per-address cap, all from 127.0.0.1, while a
 * normal client on 127.0.0.2 calls a tool every 50 ms. The gateway's file descriptors stay under the
 * cap, its memory under what the bounds allow (send_buffer per slow stream, the event log), the
 * normal client's calls all succeed, and once the deadlines pass everything the attack held is freed.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { WebSocket } from 'ws'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { eventually } from '../fixtures/waiting.ts'

t.setTimeout(120_000)

const flood = fileURLToPath(new URL('../fixtures/handlers/flood.ts', import.meta.url))
const CAP = 150
const SEND_BUFFER = 256 * 1024
const EVENT_CAPACITY = 64
const SLOW_SSE = 8
const SLOW_WS = 8
const TRICKLED = 40
const IDLE = CAP // with the others, past the cap
/** 12.5 MiB to each of 17 sessions: without the send_buffer bound the slow ones would hold 200 MiB. */
const FLOOD = { count: 800, size: 16 * 1024 }
/**
 * The gateway's V8 heap limit here, well under what holding the flood would take. Resident memory
 * alone cannot tell held bytes from garbage V8 has not yet collected: on Node 24 the gateway's RSS grew
 * 67, 93 and 114 MiB for floods of 400, 800 and 1,600 messages with no heap limit (V8 grows the heap
 * with the allocation rate before it collects), and 80 MiB for 1,600 under a 100 MiB limit, while it
 * served throughout. A gateway that held the flood would run out of heap and stop answering. The young
 * generation is held small too (Node 24 lets it grow to 3 x 32 MiB with the allocation rate, garbage
 * the RSS measure would count: at a load average of 22 it read 86 MiB against the 86 MiB allowed).
 */
const HEAP_LIMIT_MIB = 96
const YOUNG_SEMI_SPACE_MIB = 8

/** The gateway's open file descriptors and resident memory (bytes), from /proc. */
function usage(pid: number): { fds: number; rss: number } {
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
  return { fds: readdirSync(`/proc/${pid}/fd`).length, rss }
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }

/** A raw connection from 127.0.0.1 that the test never reads from (paused). */
async function raw(port: number, first = ''): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.1' })
  socket.on('error', () => undefined)
  await new Promise((resolve) => socket.once('connect', resolve).once('error', resolve).once('close', resolve))
  if (first !== '' && !socket.destroyed) socket.write(first)
  socket.pause()
  return socket
}

t.test('slow readers, trickled bodies and idle connections at once; a normal client is served throughout', async (t) => {
  const gateway = await startGatewayProcess(t, {
    connections: { header_timeout: 3, body_timeout: 3, max_per_address: CAP },
    store: { type: 'memory', event_capacity: EVENT_CAPACITY },
    routes: [
      { location: '/flood', handler: flood, server: { name: 'flood', version: '1.0.0' }, transports: ['streamable_http', 'websocket'], send_buffer: { max_bytes: SEND_BUFFER, max_messages: 1024 } },
      liveRoute,
    ],
  }, 1, 30_000, undefined, `--max-old-space-size=${HEAP_LIMIT_MIB} --max-semi-space-size=${YOUNG_SEMI_SPACE_MIB}`)
  const pid = gateway.logs.find((line) => line.msg === 'mcp-edge listening')!.pid as number
  const port = Number(new URL(gateway.url).port)
  const sockets: Socket[] = []
  const sockets2: WebSocket[] = []
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    for (const ws of sockets2) ws.terminate()
  })

  // The normal client: its own address, its own session, a call every 50 ms.
  const { Agent } = await import('node:http')
  const { request } = await import('node:http')
  const agent = new Agent({ keepAlive: true, localAddress: '127.0.0.2' } as ConstructorParameters<typeof Agent>[0] & { localAddress: string })
  t.teardown(() => agent.destroy())
  const call = (body: object, sessionId?: string): Promise<{ status: number; text: string; session?: string; ms: number }> => new Promise((resolve, reject) => {
    const started = performance.now()
    const headers: Record<string, string> = { ...JSON_HEADERS }
    if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
    const outgoing = request({ host: '127.0.0.1', port, path: '/live', method: 'POST', headers, agent, timeout: 10_000 }, (incoming) => {
      let text = ''
      incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () =>
        resolve({ status: incoming.statusCode!, text, ms: performance.now() - started, ...(typeof incoming.headers['mcp-session-id'] === 'string' ? { session: incoming.headers['mcp-session-id'] } : {}) }))
    })
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 10 s')))
    outgoing.on('error', reject)
    outgoing.end(JSON.stringify(body))
  })
  const init = await call({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'normal', version: '1' } } })
  const normal = init.session!
  await call({ jsonrpc: '2.0', method: 'notifications/initialized' }, normal)
  for (let n = 0; n < 20; n++) await call({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'whoami' } }, normal)
  await sleep(500)
  const before = usage(pid)

  const latencies: number[] = []
  const failures: string[] = []
  let calling = true
  const normalLoop = (async () => {
    for (let n = 0; calling; n++) {
      const answer = await call({ jsonrpc: '2.0', id: `n${n}`, method: 'tools/call', params: { name: 'whoami' } }, normal).catch((error: Error) => ({ status: 0, text: error.message, ms: 0 }))
      if (answer.status !== 200 || !answer.text.includes(`"id":"n${n}"`) || answer.text.includes('"error"')) failures.push(`${answer.status} ${answer.text.slice(0, 200)}`)
      latencies.push(answer.ms)
      await sleep(50)
    }
  })()
  let peak = before
  const sampler = setInterval(() => {
    try {
      const now = usage(pid)
      peak = { fds: Math.max(peak.fds, now.fds), rss: Math.max(peak.rss, now.rss) }
    } catch { /* the process is gone: the assertions below say so */ }
  }, 100)
  t.teardown(() => clearInterval(sampler))

  // Slow SSE readers: a session each, its GET stream opened on a raw socket never read.
  const flooder = await fetch(`${gateway.url}/flood`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'f', version: '1' } } }) })
  await flooder.text()
  const flooderSession = flooder.headers.get('mcp-session-id')!
  for (let n = 0; n < SLOW_SSE; n++) {
    const response = await fetch(`${gateway.url}/flood`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } }) })
    await response.text()
    const sessionId = response.headers.get('mcp-session-id')!
    sockets.push(await raw(port, `GET /flood HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n`))
  }
  // Slow WebSocket readers: initialized, then their socket paused.
  for (let n = 0; n < SLOW_WS; n++) {
    const ws = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/flood`, 'mcp', { localAddress: '127.0.0.1' })
    sockets2.push(ws)
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    const answered = new Promise((resolve) => ws.once('message', resolve))
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow-ws', version: '1' } } }))
    await answered
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    ;(ws as unknown as { _socket: Socket })._socket.pause()
  }
  // Trickled bodies: complete headers, then a byte now and then of a body that never completes.
  const trickled: Socket[] = []
  for (let n = 0; n < TRICKLED; n++) trickled.push(await raw(port, `POST /live HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n{`))
  sockets.push(...trickled)
  const trickle = setInterval(() => { for (const socket of trickled) if (!socket.destroyed) socket.write(' ') }, 300)
  t.teardown(() => clearInterval(trickle))
  // Idle connections, up to the cap and past it.
  for (let n = 0; n < IDLE; n++) sockets.push(await raw(port))

  // The flood: every /flood session is sent FLOOD.count log messages of FLOOD.size bytes.
  const flooded = await fetch(`${gateway.url}/flood`, { method: 'POST', headers: { ...JSON_HEADERS, 'mcp-session-id': flooderSession }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', arguments: FLOOD } }) })
  t.match(await flooded.text(), /flooded/, 'the flood ran to its end')

  await sleep(4000) // past header_timeout + body_timeout and a sweep
  const during = { ...peak }
  calling = false
  await normalLoop
  clearInterval(trickle)

  const sorted = [...latencies].sort((a, b) => a - b)
  const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0
  const held = SLOW_SSE + SLOW_WS + TRICKLED + IDLE
  t.comment(`gateway before: ${before.fds} fds, ${(before.rss / 2 ** 20).toFixed(0)} MiB; at peak: ${during.fds} fds, ${(during.rss / 2 ** 20).toFixed(0)} MiB; ${held} attacking connections (cap ${CAP})`)
  t.comment(`normal client: ${latencies.length} calls, p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms`)
  t.same(failures, [], 'every call of the normal client succeeded')
  t.ok(latencies.length > 20, `the normal client kept calling (${latencies.length} calls)`)
  t.ok(during.fds <= before.fds + CAP + 16, `file descriptors stayed under the per-address cap (${during.fds} ≤ ${before.fds} + ${CAP} + 16)`)
  // What the bounds allow: send_buffer per slow stream, the event log of each flooded SSE session,
  // and room for V8's and the allocator's own growth under the load.
  const allowed = (SLOW_SSE + SLOW_WS) * SEND_BUFFER + (SLOW_SSE + 1) * EVENT_CAPACITY * FLOOD.size * 2 + 64 * 2 ** 20
  t.ok(during.rss - before.rss <= allowed, `memory grew ${((during.rss - before.rss) / 2 ** 20).toFixed(0)} MiB, under ${(allowed / 2 ** 20).toFixed(0)} MiB`)

  // The deadlines have passed: the gateway let go of what the attack held.
  await eventually(() => usage(pid).fds <= before.fds + 8, 10_000).catch(() => undefined)
  const after = usage(pid)
  t.ok(after.fds <= before.fds + 8, `afterwards the connections are closed (${after.fds} fds, ${before.fds} before)`)
  const answer = await call({ jsonrpc: '2.0', id: 'last', method: 'tools/call', params: { name: 'whoami' } }, normal)
  t.equal(answer.status, 200, 'the normal client is still served')
})
