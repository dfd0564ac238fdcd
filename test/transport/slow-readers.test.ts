// Clients that never read what the gateway sends them: an SSE stream or a WebSocket whose unsent
// backlog passes its route's send_buffer bound is cut, so the memory a slow client holds stays under
// the bound; a cut SSE stream's events stay in the event log, and a Last-Event-ID resumes them all.
import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'
import t from 'tap'
import { WebSocket } from 'ws'
import { gatewayWith } from '../e2e/harness.ts'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'
import { eventually } from '../fixtures/waiting.ts'
import { openStreamCount, SseChannel } from '../../gateway/transport/sse.ts'

t.setTimeout(120_000)
v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

const handler = fileURLToPath(new URL('../fixtures/handlers/flood.ts', import.meta.url))
const route = { location: '/flood', handler, server: { name: 'flood', version: '1.0.0' }, transports: ['streamable_http', 'websocket'] }
const bound = { max_bytes: 256 * 1024, max_messages: 1024 }
const EVENT_BYTES = 64 * 1024

/** Opens the session's GET stream on a raw socket and never reads it; `read()` later takes what arrived. */
async function silentGet(t: { teardown(fn: () => unknown): void }, url: string, sessionId: string, lastEventId?: string): Promise<{ socket: Socket; closed: Promise<void>; read: () => Promise<string> }> {
  const { port, pathname } = new URL(url)
  const socket = connect({ host: '127.0.0.1', port: Number(port) })
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('connect', resolve))
  const resume = lastEventId === undefined ? '' : `Last-Event-ID: ${lastEventId}\r\n`
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\nMcp-Protocol-Version: 2025-11-25\r\n${resume}\r\n`)
  socket.pause()
  let ended = false
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.once('end', () => (ended = true))
  return {
    socket,
    closed,
    async read() {
      const chunks: Buffer[] = []
      socket.on('data', (chunk: Buffer) => chunks.push(chunk))
      socket.resume()
      await eventually(() => ended || socket.destroyed, 10_000).catch(() => undefined)
      return Buffer.concat(chunks).toString('utf8')
    },
  }
}

/** The complete SSE events in a raw response (an event cut short at the end is not one). */
function completeEvents(raw: string): Array<{ id?: string; data: string }> {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4)
  const blocks = body.split('\n\n')
  blocks.pop()
  return blocks.flatMap((block) => {
    const event: { id?: string; data: string } = { data: '' }
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) event.id = line.slice(4)
      else if (line.startsWith('data: ')) event.data += line.slice(6)
    }
    return event.data === '' ? [] : [event]
  })
}

const heapMb = (): number => {
  gc()
  return process.memoryUsage().heapUsed / 1024 / 1024
}

t.test('10 GET streams that never read while the handler pushes 20 MB to each: cut, heap bounded', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, send_buffer: bound }], { store: { event_capacity: 16 } })
  const url = `${gateway.url}/flood`
  const streams = []
  for (let i = 0; i < 10; i++) streams.push(await silentGet(t, url, await rawSession(url)))
  await eventually(() => openStreamCount() === 10)
  const before = heapMb()
  const caller = await rawSession(url)
  const flood = await post(url, caller, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', arguments: { count: 320, size: EVENT_BYTES } } })
  t.match(await flood.json(), { id: 1, result: { content: [{ text: 'flooded' }] } }, 'the handler ran to the end')
  const after = heapMb()
  t.equal(openStreamCount(), 0, 'every silent stream was cut')
  t.ok(after - before < 40, `heap after GC grew ${(after - before).toFixed(1)} MB for 10 streams × 20 MB pushed (bound ${bound.max_bytes / 1024} KiB each)`)
  await Promise.all(streams.map((stream) => stream.read()))
})

t.test('a cut request stream resumes from the event log: every event once, in order, then the response', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, send_buffer: bound }], { store: { event_capacity: 1000, cache_ttl: 600 } })
  const url = `${gateway.url}/flood`
  const sessionId = await rawSession(url)
  const count = 300
  const cutBefore = SseChannel.cutSlowReaders
  // The call's own stream, on a raw socket that is never read.
  const { port } = new URL(url)
  const socket = connect({ host: '127.0.0.1', port: Number(port) })
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('connect', resolve))
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'flood-1', method: 'tools/call', params: { name: 'flood', arguments: { count, size: EVENT_BYTES, to: 'request' } } })
  socket.write(`POST /flood HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  socket.pause()
  await eventually(() => SseChannel.cutSlowReaders > cutBefore, 60_000)
  t.pass('the stream of the call was cut while its client did not read')
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.resume()
  await new Promise((resolve) => socket.once('close', resolve))
  const first = completeEvents(Buffer.concat(chunks).toString('utf8'))
  const lastId = first.at(-1)!.id!
  t.ok(first.length < count, `the cut stream carried ${first.length} of ${count} events`)

  const resumed = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': lastId } })
  t.equal(resumed.status, 200, 'resumed with the last event id it got')
  const reader = new SseReader(resumed)
  const rest: Array<{ params?: { data: { n: number } }; id?: string; result?: unknown }> = []
  for (let event = await reader.next(); event !== undefined; event = await reader.next()) {
    if (event.data === '') continue
    const message = JSON.parse(event.data) as { params?: { data: { n: number } }; id?: string; result?: unknown }
    rest.push(message)
    if (message.id === 'flood-1') break
  }
  await reader.cancel()
  const numbers = [...first.map((event) => (JSON.parse(event.data) as { params: { data: { n: number } } }).params.data.n), ...rest.filter((m) => m.params !== undefined).map((m) => m.params!.data.n)]
  t.same(numbers, Array.from({ length: count }, (_, i) => i + 1), 'every event exactly once, in order')
  t.match(rest.at(-1), { id: 'flood-1', result: { content: [{ text: 'flooded' }] } }, 'then the response')
})

t.test('a WebSocket peer that never reads is closed at its send_buffer bound', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, send_buffer: bound }])
  const ws = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/flood`, 'mcp')
  t.teardown(() => ws.terminate())
  await new Promise((resolve) => ws.once('open', resolve))
  const answered = new Promise((resolve) => ws.once('message', resolve))
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }))
  await answered
  ;(ws as unknown as { _socket: Socket })._socket.pause()
  const before = heapMb()
  const flood = await post(`${gateway.url}/flood`, await rawSession(`${gateway.url}/flood`), { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', arguments: { count: 320, size: EVENT_BYTES } } })
  await flood.json()
  const after = heapMb()
  await eventually(async () => (await gateway.store.count('/flood')) === 1, 5000)
  t.pass('the WebSocket\'s session ended: the connection was closed')
  t.ok(after - before < 6, `heap after GC grew ${(after - before).toFixed(1)} MB for 20 MB pushed`)
})

t.test('defaults: 1 MiB and 1024 messages', async (t) => {
  const gateway = await gatewayWith(t, [route])
  t.same(gateway.endpoints.get('/flood')!.route.send_buffer, { max_bytes: 1048576, max_messages: 1024 })
})
