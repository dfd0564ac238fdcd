/**
 * Upstream streams that break for real (a TCP relay between the gateway and the upstream destroys
 * every connection, both sides) are taken up again:
 * - Streamable HTTP: the SSE stream of a call in flight is resumed with `Last-Event-ID` on a new
 *   connection, and the upstream (an mcp-edge process, resumable by default) replays what the cut lost:
 *   every progress notification reaches the downstream client once, in order, and the result too.
 * - WebSocket: the link reconnects, the upstream session is initialized anew, and calls go on.
 */
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { gatewayWith } from '../client/harness.ts'
import { tcpRelay } from './tcp-relay.ts'

t.setTimeout(60_000)
const text = (result: { content?: unknown }): string => ((result.content as Array<{ text: string }>)[0]!.text)
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('an HTTP upstream\'s SSE stream cut mid-call is resumed with Last-Event-ID: no event lost', async (t) => {
  const upstream = await startGatewayProcess(t, { routes: [liveRoute] })
  const relay = await tcpRelay(t, Number(new URL(upstream.url).port))
  const proxy = await gatewayWith(t, [{
    location: '/p',
    server: { name: 'p', version: '1.0.0' },
    upstreams: [{ name: 'live', url: `http://127.0.0.1:${relay.port}/live`, timeout: 20, health_interval: 3600 }],
    prefix: 'never',
  }])
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/p` }))
  await client.initialize()
  t.teardown(() => client.close())

  for (let round = 1; round <= 2; round++) {
    const progress: number[] = []
    const call = client.callTool('slow', { steps: 30 }, { onProgress: (p) => void progress.push(p) })
    // Cut once the stream is flowing (a few events in, more each round), not after a fixed time: on a
    // busy machine the call may not have started streaming yet, and a cut POST is not resumable.
    const deadline = Date.now() + 20_000
    while (progress.length < 4 * round && Date.now() < deadline) await sleep(5)
    const seenAtCut = progress.length
    const cut = relay.cut()
    t.ok(cut >= 1, `round ${round}: the connections were cut (${cut}) with ${seenAtCut} progress events seen`)
    const result = await call
    t.equal(text(result), 'done after 30 steps', `round ${round}: the call's result arrived`)
    t.ok(seenAtCut > 0 && seenAtCut < 30, `round ${round}: the cut fell inside the stream`)
    t.same(progress, Array.from({ length: 30 }, (_, i) => i + 1), `round ${round}: every progress event once, in order`)
  }
  const observed = JSON.parse(text(await client.callTool('whoami'))).observed as { completed?: boolean }
  t.equal(observed.completed, true, 'the upstream ran the call to its end (a cut is no cancellation)')
  t.ok(relay.accepted > 2, `new connections were made (${relay.accepted} in all)`)
})

t.test('a WebSocket upstream whose connection is cut reconnects, with a new handshake', async (t) => {
  const upstream = await startGatewayProcess(t, { routes: [{ ...liveRoute, transports: ['websocket'] }] })
  const relay = await tcpRelay(t, Number(new URL(upstream.url).port))
  const proxy = await gatewayWith(t, [{
    location: '/w',
    server: { name: 'w', version: '1.0.0' },
    upstreams: [{ name: 'live', url: `ws://127.0.0.1:${relay.port}/live`, timeout: 5, health_interval: 2 }],
    prefix: 'never',
  }])
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/w` }))
  await client.initialize()
  t.teardown(() => client.close())

  const first = JSON.parse(text(await client.callTool('whoami'))) as { pid: number; observed: { initialized: number } }
  const pid = first.pid
  const initializedBefore = first.observed.initialized
  const before = relay.accepted
  relay.cut()
  let answered: { pid: number } | undefined
  const cutAt = Date.now()
  for (const until = Date.now() + 10_000; answered === undefined && Date.now() < until;) {
    const result = await client.callTool('whoami')
    if (result.isError !== true) answered = JSON.parse(text(result)) as { pid: number }
    else await sleep(100)
  }
  t.equal(answered?.pid, pid, `the same upstream answers again after ${Date.now() - cutAt} ms`)
  t.ok(relay.accepted > before, 'over a new connection')
  // `initialized` counts the sessions the upstream saw begin: the probe's and this session's, then again after the cut.
  const initialized = (JSON.parse(text(await client.callTool('whoami'))).observed as { initialized: number }).initialized
  t.ok(initialized > initializedBefore, `the upstream saw a new handshake (initialized ${initializedBefore} → ${initialized})`)
  const progress: number[] = []
  await client.callTool('slow', { steps: 3 }, { onProgress: (p) => void progress.push(p) })
  t.same(progress, [1, 2, 3], 'progress flows on the new connection')
})
