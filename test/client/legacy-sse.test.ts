/**
 * The HTTP+SSE (2024-11-05) client transport's own rules, against hand-written servers: the endpoint
 * resolved against the stream's URL, no endpoint event in time, the bound on requests awaiting their
 * answer, and a POST the server no longer knows (404), which ends the transport.
 */
import t from 'tap'
import { TimeoutError, TransportError } from '../../gateway/client/errors.ts'
import { fetchExchange } from '../../gateway/client/http-exchange.ts'
import { LegacySseTransport } from '../../gateway/client/legacy-sse.ts'
import { rawSseServer } from '../upstream/fixtures/legacy-sse-server.ts'

const exchange = fetchExchange(fetch)
const request = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'ping' })

t.test('a relative endpoint is resolved against the stream\'s URL', async (t) => {
  const server = await rawSseServer(t, () => 'event: endpoint\ndata: messages?sessionId=r1\n\n')
  const transport = new LegacySseTransport({ url: server.url, exchange })
  t.teardown(() => transport.close())
  await transport.start()
  t.equal(transport.endpoint?.href, new URL('/messages?sessionId=r1', server.url).href)
  await transport.send(request(1))
  t.same(server.posts, ['/messages?sessionId=r1'], 'the POST went there')
})

t.test('no endpoint event within connectTimeoutMs: start rejects and the stream is closed', async (t) => {
  const server = await rawSseServer(t, () => ': waiting\n\n')
  const transport = new LegacySseTransport({ url: server.url, exchange, connectTimeoutMs: 150 })
  let closed = false
  transport.onclose = () => (closed = true)
  await t.rejects(transport.start(), TimeoutError)
  t.ok(closed, 'closed')
  await t.rejects(transport.send(request(1)), TransportError, 'nothing can be sent')
})

t.test('maxPending: one request more than the bound fails at once; a cancel frees a place', async (t) => {
  const server = await rawSseServer(t, (origin) => `event: endpoint\ndata: ${origin}/messages\n\n`)
  const transport = new LegacySseTransport({ url: server.url, exchange, maxPending: 2 })
  t.teardown(() => transport.close())
  await transport.start()
  await transport.send(request(1))
  await transport.send(request(2))
  await t.rejects(transport.send(request(3)), { message: /2 requests already await their answer/, refused: true })
  t.equal(server.posts.length, 2, 'the third was never POSTed')
  await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'enough' } })
  await transport.send(request(4))
  t.equal(server.posts.length, 4, 'a cancelled request frees its place')
})

t.test('a POST answered 404 (the server forgot the session) fails and ends the transport', async (t) => {
  const server = await rawSseServer(t, (origin) => `event: endpoint\ndata: ${origin}/messages\n\n`, undefined, 404)
  const transport = new LegacySseTransport({ url: server.url, exchange })
  let closed = false
  transport.onclose = () => (closed = true)
  await transport.start()
  await t.rejects(transport.send(request(1)), { message: /HTTP 404/, status: 404 })
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(closed, 'closed: the next request opens a new stream and session')
})
