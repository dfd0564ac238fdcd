/**
 * The lean HTTP/1.1 client (gateway/client/http1.ts) against real servers on loopback: node:http for
 * the everyday shapes, a raw TCP server for the awkward ones (a body cut into one-byte writes,
 * close-delimited bodies, `Connection: close`, a server that closes idle connections, an oversize head).
 */
import http from 'node:http'
import net from 'node:net'
import t from 'tap'
import { Http1Pool } from '../../gateway/client/http1.ts'
import { LightAbort } from '../../gateway/wire/abort-like.ts'

interface Teardown { teardown(fn: () => unknown): void }

const never = new AbortController().signal
const text = (chunks: Uint8Array[]): string => Buffer.concat(chunks).toString('utf8')

async function listen(t: Teardown, server: net.Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  // Kept connections would hold close() open: they go first.
  const sockets = new Set<net.Socket>()
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise((resolve) => server.close(resolve))
  })
  return new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp?x=1`)
}

/** A raw server answering each request (head ended by a blank line) with `reply(n)`; counts connections. */
async function raw(t: Teardown, reply: (socket: net.Socket, n: number) => void): Promise<{ url: URL; connections: () => number }> {
  let connections = 0
  let n = 0
  const server = net.createServer((socket) => {
    connections++
    socket.setNoDelay(true)
    let seen = ''
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1')
      const end = seen.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length: (\d+)/i.exec(seen.slice(0, end))?.[1] ?? 0)
      if (seen.length < end + 4 + length) return
      seen = seen.slice(end + 4 + length)
      reply(socket, ++n)
    })
  })
  return { url: await listen(t, server), connections: () => connections }
}

t.test('JSON and chunked answers over node:http, on one kept connection', async (t) => {
  const seen: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }> = []
  let connections = 0
  const server = http.createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk)).on('end', () => {
      seen.push({ method: request.method, url: request.url, headers: request.headers, body })
      if (request.url!.startsWith('/mcp')) {
        response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ echo: body }))
      }
    })
  })
  server.on('connection', () => connections++)
  const url = await listen(t, server)
  const exchange = new Http1Pool().exchange()
  for (let i = 0; i < 3; i++) {
    const answer = await exchange(url, 'POST', { 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' }, `{"n":${i}}`, never)
    t.equal(answer.status, 200)
    t.equal(answer.header('mcp-session-id'), 's1', 'headers by lower-case name')
    t.same(JSON.parse(await answer.text(1000)), { echo: `{"n":${i}}` }, `answer ${i} (chunked: no content-length)`)
  }
  t.equal(connections, 1, 'three exchanges, one connection')
  t.equal(seen[0]!.url, '/mcp?x=1', 'path and query sent')
  t.equal(seen[0]!.headers['mcp-protocol-version'], '2025-11-25', 'headers sent')
  t.equal(seen[0]!.headers.host, url.host, 'Host sent')
  await t.rejects(exchange(url, 'POST', { 'x-bad': 'a\r\nx-injected: 1' }, '{}', never), TypeError, 'a header value with a line break is refused')
})

t.test('a body arriving one byte per write, chunked, is read whole', async (t) => {
  const body = 'event: message\ndata: {"é":1}\n\n'
  const { url } = await raw(t, (socket) => {
    const wire = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`
    const bytes = Buffer.from(wire)
    let at = 0
    const drip = (): void => {
      if (at < bytes.length) socket.write(bytes.subarray(at, ++at), () => setImmediate(drip))
    }
    drip()
  })
  const answer = await new Http1Pool().exchange()(url, 'GET', {}, undefined, never)
  const chunks: Uint8Array[] = []
  for await (const chunk of answer.chunks()) chunks.push(chunk)
  t.equal(text(chunks), body, 'every byte, in order, multi-byte characters intact')
})

t.test('Connection: close and close-delimited bodies end the connection; the next exchange opens another', async (t) => {
  const server = await raw(t, (socket, n) => {
    if (n === 1) socket.end('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nhi')
    else socket.end('HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{"until":"close"}')
  })
  const exchange = new Http1Pool().exchange()
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(100), 'hi')
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(100), '{"until":"close"}', 'a body delimited by the close')
  t.equal(server.connections(), 2, 'a new connection for the second')
})

t.test('a connection the server closed while idle is not reused', async (t) => {
  const server = await raw(t, (socket) => {
    socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')
    setTimeout(() => socket.end(), 20) // the server's keep-alive timeout, very short
  })
  const exchange = new Http1Pool().exchange()
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(10), 'ok')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(10), 'ok', 'the second exchange succeeds')
  t.equal(server.connections(), 2, 'on a fresh connection')
})

t.test('a kept connection is not taken past the keep-alive timeout the server announced', async (t) => {
  // timeout=2: kept for 1 s (one second of margin before the server's own close), then left unused.
  const server = await raw(t, (socket) => socket.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=2\r\ncontent-length: 2\r\n\r\nok'))
  const exchange = new Http1Pool().exchange()
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(10), 'ok')
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(10), 'ok')
  t.equal(server.connections(), 1, 'reused while fresh')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(10), 'ok')
  t.equal(server.connections(), 2, 'a new connection once the kept one is past its time')
})

t.test('a LightAbort cancels like an AbortSignal', async (t) => {
  const server = await raw(t, (socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\npart'))
  const exchange = new Http1Pool().exchange()
  const abort = new LightAbort()
  const partial = await exchange(server.url, 'POST', {}, '{}', abort)
  const reading = partial.text(100)
  abort.abort()
  await t.rejects(reading, { code: 'ABORT_ERR' }, 'an abort mid-body ends the read')
  const aborted = new LightAbort()
  aborted.abort('gone')
  await t.rejects(exchange(server.url, 'POST', {}, '{}', aborted), { code: 'ABORT_ERR' }, 'an aborted one sends nothing')
})

t.test('limits and failures', async (t) => {
  const server = await raw(t, (socket, n) => {
    if (n === 1) socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n${'x'.repeat(5000)}`)
    else if (n === 2) socket.write(`HTTP/1.1 200 OK\r\nx-big: ${'y'.repeat(70 * 1024)}\r\n\r\n`)
    else if (n === 3) socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\nonly part')
    else if (n === 4) socket.destroy()
  })
  const exchange = new Http1Pool().exchange()
  await t.rejects((await exchange(server.url, 'POST', {}, '{}', never)).text(100), { name: 'BodyTooLargeError' }, 'a body over the limit')
  await t.rejects(exchange(server.url, 'POST', {}, '{}', never), { code: 'HPE_HEADER_OVERFLOW' }, 'a head over 64 KiB')
  const controller = new AbortController()
  const partial = await exchange(server.url, 'POST', {}, '{}', controller.signal)
  const reading = partial.text(1000)
  controller.abort()
  await t.rejects(reading, { code: 'ABORT_ERR' }, 'an abort mid-body ends the read')
  await t.rejects(exchange(server.url, 'POST', {}, '{}', never), { code: 'ECONNRESET' }, 'a connection dropped before the answer')
  const closed = net.createServer()
  const url = await listen(t, closed)
  await new Promise((resolve) => closed.close(resolve))
  await t.rejects(exchange(url, 'POST', {}, '{}', never), { code: 'ECONNREFUSED' }, 'nobody listening')
})

t.test('the body limit of text() holds whether the body arrived before the call or after it', async (t) => {
  const big = 'x'.repeat(5000)
  const chunked = (body: string): string => `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
  let later: net.Socket | undefined
  const server = await raw(t, (socket, n) => {
    if (n === 1 || n === 3) socket.write(chunked(n === 1 ? big : 'small'))
    else {
      // The head alone; the body once text() has been called.
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n')
      later = socket
    }
  })
  const exchange = new Http1Pool().exchange()
  const whole = await exchange(server.url, 'POST', {}, '{}', never)
  await new Promise((resolve) => setTimeout(resolve, 50)) // the whole body (one write with the head) is in
  await t.rejects(whole.text(100), { name: 'BodyTooLargeError' }, 'an over-limit body already complete is refused')
  const streamed = await exchange(server.url, 'POST', {}, '{}', never)
  const reading = streamed.text(100)
  later!.write(chunked(big).slice(chunked(big).indexOf('\r\n\r\n') + 4))
  await t.rejects(reading, { name: 'BodyTooLargeError' }, 'the same error when it arrives after the call')
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(100), 'small', 'a body under the limit still reads')
  t.equal(server.connections(), 2, 'the completed connection was kept; the one cut mid-body was not')
})

t.test('the head read by hand: status line, blanks around names and values, repeated headers, a changed keep-alive hint', async (t) => {
  const server = await raw(t, (socket, n) => {
    if (n === 1) socket.write('HTTP/1.1 201 Created\r\nX-Pad :  a b \t\r\nX_PAD: not it\r\nx-twice: 1\r\nX-Twice: 2\r\nKeep-Alive: timeout=5\r\ncontent-length: 2\r\n\r\nok')
    else if (n === 2) socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\ncontent-length: 2\r\n\r\nok')
    else if (n === 3) socket.write('HTTP/1.1 2x0 OK\r\ncontent-length: 0\r\n\r\n')
    else socket.write('HTTP/2.0 200 OK\r\ncontent-length: 0\r\n\r\n')
  })
  const exchange = new Http1Pool().exchange()
  const first = await exchange(server.url, 'POST', {}, '{}', never)
  t.equal(first.status, 201)
  t.equal(first.header('x-pad'), 'a b', 'blanks around a name and its value dropped, inner ones kept; X_PAD is another name')
  t.equal(first.header('x-twice'), '1, 2', 'a repeated header joined')
  t.equal(await first.text(10), 'ok')
  t.equal(await (await exchange(server.url, 'POST', {}, '{}', never)).text(10), 'ok', 'its answer changes the hint to timeout=1: kept for 0 s')
  t.equal(server.connections(), 1, 'timeout=5 kept the first connection for the second exchange')
  await t.rejects(exchange(server.url, 'POST', {}, '{}', never), { code: 'HPE_INVALID_CONSTANT' }, 'a status code that is not three digits')
  await t.rejects(exchange(server.url, 'POST', {}, '{}', never), { code: 'HPE_INVALID_CONSTANT' }, 'not HTTP/1.x')
  t.equal(server.connections(), 3, 'the hint that changed to timeout=1 was read: that connection was not taken again')
})
