// Streams that drop: the client waits the server's `retry`, resumes with GET + Last-Event-ID, and
// reports a stream it cannot resume as a TransportError for the request it carried. Against the
// gateway (SSE polling with ctx.closeStream) and a scripted HTTP server for the cases the gateway
// never produces.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { McpClient, StreamableHttpTransport, TimeoutError, TransportError } from '../../gateway/client/index.ts'
import { RETRY_MS } from './fixtures/poll.ts'
import { clientFixture, eventually, gatewayWith, httpClient, recordingFetch, text } from './harness.ts'

t.test('a POST stream the gateway closes mid-request is resumed after `retry` with Last-Event-ID', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/poll', handler: clientFixture('poll.ts'), server: { name: 'poll', version: '1.0.0' }, resumability: true }])
  const seen = recordingFetch()
  const client = await httpClient(t, `${gateway.url}/poll`, {}, { fetch: seen.fetch, standaloneStream: false })
  const progress: [number, string | undefined, number][] = []
  const started = Date.now()
  const result = await client.callTool('poll', {}, { onProgress: (value, _total, message) => void progress.push([value, message, Date.now() - started]) })
  t.equal(text(result), 'polled')
  t.same(progress.map(([value, message]) => [value, message]), [[1, 'before the cut'], [2, 'while cut'], [3, 'after resuming']], 'every progress once, in order')
  t.ok(progress[1]![2] >= RETRY_MS, `the missed progress came after waiting retry (${progress[1]![2]} ms)`)
  const resumes = seen.headers.filter((headers) => headers.get('last-event-id') !== null)
  t.equal(resumes.length, 1, 'one resumption')
  t.match(seen.exchanges, ['POST initialize 200', 'POST notifications/initialized 202', 'POST tools/call 200', 'GET 200'])
})

interface Scripted { url: string; log: string[]; times: Record<string, number> }

/** A loopback HTTP server that plays a fixed Streamable HTTP script; `routes` answers GETs by Last-Event-ID. */
async function scripted(t: { teardown(fn: () => unknown): void }, onPost: (body: { id?: number; method?: string }, res: http.ServerResponse) => void, onGet: (lastEventId: string | undefined, res: http.ServerResponse) => void): Promise<Scripted> {
  const log: string[] = []
  const times: Record<string, number> = {}
  const server = http.createServer((req, res) => {
    const lastEventId = req.headers['last-event-id'] as string | undefined
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      if (req.method === 'GET') {
        log.push(`GET ${lastEventId ?? '-'}`)
        times[`GET ${lastEventId ?? '-'}`] = Date.now()
        return onGet(lastEventId, res)
      }
      if (req.method === 'DELETE') {
        log.push('DELETE')
        return res.writeHead(200).end()
      }
      const message = JSON.parse(body) as { id?: number; method?: string }
      log.push(`POST ${message.method ?? 'response'}`)
      if (message.method === 'initialize') {
        return res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'S1' }).end(JSON.stringify({
          jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'scripted', version: '1' } },
        }))
      }
      onPost(message, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, log, times }
}

const sse = (res: http.ServerResponse): http.ServerResponse => res.writeHead(200, { 'content-type': 'text/event-stream' })
const event = (id: string, data: object | '', retry?: number): string =>
  `id: ${id}\n${retry === undefined ? '' : `retry: ${retry}\n`}data: ${data === '' ? '' : JSON.stringify(data)}\n\n`

t.test('the standalone stream reconnects after `retry` with Last-Event-ID; a POST stream resumes likewise', async (t) => {
  let posted = 0
  const server = await scripted(t, (message, res) => {
    if (message.id === undefined) return res.writeHead(202).end()
    posted = Date.now()
    // Priming event with retry, one progress, then the connection drops without the response.
    sse(res).write(event('p1', '', 120))
    res.write(event('p2', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: message.id, progress: 1 } }))
    setTimeout(() => res.destroy(), 20)
  }, (lastEventId, res) => {
    if (lastEventId === undefined) {
      sse(res).write(event('g1', '', 80))
      res.write(event('g2', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }))
      setTimeout(() => res.end(), 20)
    } else if (lastEventId === 'g2') {
      sse(res).write(event('g3', { jsonrpc: '2.0', method: 'notifications/resources/list_changed' }))
    } else if (lastEventId === 'p2') {
      sse(res).end(event('p3', { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'resumed' }] } }))
    } else {
      res.writeHead(404).end()
    }
  })
  let tools = 0
  let resources = 0
  const client = await httpClient(t, server.url, { on: { toolsListChanged: () => tools++, resourcesListChanged: () => resources++ } })
  await eventually(() => tools === 1 && resources === 1)
  t.ok(server.times['GET g2']! - server.times['GET -']! >= 80, 'the GET waited the standalone retry')
  const progress: number[] = []
  const result = await client.callTool('anything', {}, { onProgress: (value) => void progress.push(value) })
  t.equal(text(result), 'resumed')
  t.same(progress, [1])
  t.ok(server.times['GET p2']! - posted >= 120, 'the resume waited the POST stream retry')
  t.same(server.log, ['POST initialize', 'POST notifications/initialized', 'GET -', 'GET g2', 'POST tools/call', 'GET p2'])
})

t.test('a stream that cannot be resumed fails its request with a TransportError', async (t) => {
  const server = await scripted(t, (message, res) => {
    if (message.id === undefined) return res.writeHead(202).end()
    if (message.method === 'tools/call') {
      // No event id: nothing to resume from.
      sse(res).end(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } })}\n\n`)
    } else {
      // An id, but the server no longer knows it.
      sse(res).write(event('gone-1', '', 10))
      setTimeout(() => res.destroy(), 10)
    }
  }, (_lastEventId, res) => res.writeHead(lastOr405(_lastEventId)).end())
  const client = await httpClient(t, server.url)
  const unresumable = await client.callTool('x').catch((error: unknown) => error)
  t.type(unresumable, TransportError)
  t.match(unresumable, { message: /carried no event id/ })
  const forgotten = await client.readResource('x://y').catch((error: unknown) => error)
  t.type(forgotten, TransportError)
  t.match(forgotten, { status: 404 })
  t.same(server.log, ['POST initialize', 'POST notifications/initialized', 'GET -', 'POST tools/call', 'POST resources/read', 'GET gone-1'], 'a 405 GET means no standalone stream')
})

function lastOr405(lastEventId: string | undefined): number {
  return lastEventId === undefined ? 405 : 404
}

t.test('the HTTP timeout bounds a response head; an HTTP error is a TransportError with its status', async (t) => {
  const silent = await scripted(t, () => undefined, (_lastEventId, res) => res.writeHead(405).end())
  const client = new McpClient(new StreamableHttpTransport({ url: silent.url, timeoutMs: 100 }))
  t.teardown(() => client.close())
  const stuck = await client.initialize().catch((error: unknown) => error)
  t.type(stuck, TimeoutError, 'notifications/initialized got no 202 in time')
  t.match(stuck, { timeoutMs: 100, code: 'MCP_EDGE_CLIENT_TIMEOUT' })

  const failing = await scripted(t, (message, res) => {
    if (message.id === undefined) return res.writeHead(202).end()
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'boom' } }))
  }, (_lastEventId, res) => res.writeHead(405).end())
  const other = await httpClient(t, failing.url)
  const refused = await other.ping().catch((error: unknown) => error)
  t.type(refused, TransportError)
  t.match(refused, { status: 500, message: 'HTTP 500: boom' })
})
