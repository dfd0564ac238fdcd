/**
 * A body refused for its size (413): the connection is not reset under a sender still sending it (a
 * proxy that streams bodies would lose the answer to the reset and say 502). The rest is read and
 * dropped, the connection serves its next request, and a body still arriving after 5 s is cut.
 * Raw sockets on loopback, so what the client sees is exactly what a proxy would.
 */
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { initializeRequest, socketGateway } from '../fixtures/transport-gateway.ts'

const LIMIT = 2048
const DECLARED = 64 * 1024

/** What arrived on `socket` so far, and whether the gateway closed or reset it. */
function watch(socket: Socket): { text: () => string; ended: Promise<string> } {
  let text = ''
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => (text += chunk))
  const ended = new Promise<string>((resolve) => {
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
    socket.once('close', () => resolve('closed'))
  })
  return { text: () => text, ended }
}

const until = async (check: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (check()) return true
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return check()
}

function head(url: URL, length: number): string {
  return `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`
}

const INITIALIZE = JSON.stringify(initializeRequest(7))

/** A gateway with a small body_limit, sent the head of a larger body and `sent` bytes of it; once it has answered. */
async function refusedOnTheWay(t: Test, sent: number) {
  const gateway = await socketGateway(t, {}, { body_limit: LIMIT })
  const url = new URL(gateway.url)
  const socket = connect(Number(url.port), url.hostname)
  t.teardown(() => socket.destroy())
  const seen = watch(socket)
  socket.write(head(url, DECLARED) + 'x'.repeat(sent))
  t.ok(await until(() => seen.text().includes('\r\n\r\n'), 5000), 'answered while the body is still on its way')
  return { url, socket, seen }
}

t.test('the rest of a refused body is read and dropped; the connection serves on', async (t) => {
  const { url, socket, seen } = await refusedOnTheWay(t, 8192)
  t.match(seen.text(), /^HTTP\/1\.1 413 /, '413')
  t.notMatch(seen.text(), /connection: close/i, 'no Connection: close')
  // The rest of the declared body, then an initialize on the same connection.
  socket.write('x'.repeat(DECLARED - 8192))
  const before = seen.text().length
  socket.write(head(url, Buffer.byteLength(INITIALIZE)) + INITIALIZE)
  t.ok(await until(() => seen.text().slice(before).includes('"id":7'), 5000), 'the next request on the connection is answered')
  t.match(seen.text().slice(before), /^HTTP\/1\.1 200 /)
  t.equal(socket.destroyed, false, 'the connection is still open')
})

t.test('a refused body still arriving after 5 s is cut', async (t) => {
  const { socket, seen } = await refusedOnTheWay(t, 4096)
  const refusedAt = Date.now()
  // A sender trickling the rest, 100 bytes every 100 ms: far from done at 5 s.
  const trickle = setInterval(() => {
    if (!socket.destroyed) socket.write('x'.repeat(100))
  }, 100)
  t.teardown(() => clearInterval(trickle))
  const outcome = await Promise.race([seen.ended, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 9000))])
  const after = Date.now() - refusedAt
  clearInterval(trickle)
  t.not(outcome, 'still open', `the connection was cut (${outcome})`)
  t.ok(after >= 4500 && after < 8000, `about 5 s after the answer (${after} ms)`)
})
