/**
 * Connections against the open-file limit (issue 26, row 5): five addresses holding 1,000 idle
 * connections each took every descriptor of a gateway at `ulimit -n 4096`; a sixth address got
 * "socket hang up" for a minute and nothing was logged. Now, without `connections.*` keys, a process
 * takes at most 80 % of its file limit in connections (`max_total`) and one address a sixteenth of
 * that (`max_per_address`): a few addresses cannot take them all, and over the total a client gets
 * 503 with Retry-After at once (not a hang), logged once per burst. Run at `ulimit -n 256`, so the
 * test reaches the limit with a few hundred sockets: max_total 204, max_per_address 12.
 */
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { connectionCaps } from '../../gateway/edge/connection-guard.ts'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'

t.setTimeout(120_000)

t.test('the caps derived from the file limit', async (t) => {
  t.same(connectionCaps({ header_timeout: 60, body_timeout: 60, keepalive_timeout: 75 }, 4096), { perAddress: 204, total: 3276 }, 'ulimit -n 4096: 16 addresses to fill it')
  t.same(connectionCaps({ header_timeout: 60, body_timeout: 60, keepalive_timeout: 75 }, 1_048_576), { perAddress: 1024, total: 838_860 }, 'a large limit: 1024 per address')
  t.same(connectionCaps({ header_timeout: 60, body_timeout: 60, keepalive_timeout: 75 }, undefined), { perAddress: 1024, total: 0 }, 'an unknown limit: 1024 per address, no total')
  t.same(connectionCaps({ header_timeout: 60, body_timeout: 60, keepalive_timeout: 75, max_per_address: 0, max_total: 10 }, 4096), { perAddress: 0, total: 10 }, 'configured values win')
})

/** Opens a raw connection from `localAddress`; `first` resolves with what the server sent first ('' when it sent nothing before closing). */
async function open(port: number, localAddress: string, sockets: Socket[]): Promise<{ socket: Socket; first: Promise<string> }> {
  const socket = connect({ host: '127.0.0.1', port, localAddress })
  sockets.push(socket)
  socket.on('error', () => undefined)
  let text = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
  const first = new Promise<string>((resolve) => {
    socket.once('close', () => resolve(text))
    setTimeout(() => resolve(text), 1500).unref()
  })
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  return { socket, first }
}

/** The answers received so far, once `count` of `firsts` brought a 429 (or all of them settled); the array keeps filling after. */
async function refusedWithin(firsts: Array<Promise<string>>, count: number): Promise<string[]> {
  const received: string[] = []
  await new Promise<void>((resolve) => {
    for (const first of firsts) {
      void first.then((text) => {
        received.push(text)
        if (received.filter((answer) => answer.startsWith('HTTP/1.1 429 ')).length >= count) resolve()
      })
    }
    void Promise.all(firsts).then(() => resolve())
  })
  return received
}

async function ping(url: string): Promise<number> {
  const response = await fetch(`${url}/live`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    signal: AbortSignal.timeout(5000),
  })
  await response.text()
  return response.status
}

t.test('at ulimit -n 256: five addresses cannot take the gateway; at max_total new connections get 503 and a log line', async (t) => {
  const gateway = await startGatewayProcess(t, { routes: [liveRoute], connections: { header_timeout: 30, body_timeout: 30 } }, 1, 30_000, 256)
  const port = Number(new URL(gateway.url).port)
  const sockets: Socket[] = []
  t.teardown(() => sockets.forEach((socket) => socket.destroy()))

  // Five addresses, each opening more idle connections than it may hold.
  for (let a = 2; a <= 6; a++) {
    const opened = await Promise.all(Array.from({ length: 20 }, () => open(port, `127.0.0.${a}`, sockets)))
    // The refused ones are answered and closed at once; the held ones never answer. So wait for 8
    // refusals (each connection's `first` gives up after 1.5 s), then a little longer for a ninth that
    // should not come: a fixed 300 ms missed a refusal on a loaded machine (load average 20).
    const refusals = await refusedWithin(opened.map(({ first }) => first), 8)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const refused = refusals.filter((answer) => answer.startsWith('HTTP/1.1 429 '))
    t.equal(refused.length, 8, `127.0.0.${a}: 12 held, 8 refused with 429`)
  }
  t.equal(await ping(gateway.url), 200, 'a sixth address is served')

  // Twenty more addresses: 12 each until max_total (204), then 503 with Retry-After.
  const late: Array<Promise<string>> = []
  for (let a = 10; a < 30; a++) {
    for (let n = 0; n < 12; n++) late.push((await open(port, `127.0.0.${a}`, sockets)).first)
  }
  const answers = await Promise.all(late)
  const full = answers.filter((answer) => answer.startsWith('HTTP/1.1 503 '))
  t.ok(full.length >= 240 - (204 - 60) - 2, `over max_total: ${full.length} connections got 503`)
  const sample = full[0] ?? ''
  t.match(sample, /\r\nretry-after: 5\r\n/i, 'with Retry-After')
  t.match(JSON.parse(sample.slice(sample.indexOf('\r\n\r\n') + 4)), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /connections\.max_total/ } })
  const line = await gateway.logged((entry) => typeof entry.msg === 'string' && entry.msg.includes('connections.max_total'), 5000)
  t.match(line, { level: 40, max_total: 204, file_limit: 256 }, 'logged at warn, with the limit')
  t.equal(gateway.logs.filter((entry) => typeof entry.msg === 'string' && entry.msg.includes('connections.max_total')).length, 1, 'once for the burst')

  // The attack goes away: its connections are given back, and new clients are served.
  for (const socket of sockets) socket.destroy()
  let status = 0
  for (let tries = 0; tries < 50 && status !== 200; tries++) {
    status = await ping(gateway.url).catch(() => 0)
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(status, 200, 'served once the connections closed')
})
