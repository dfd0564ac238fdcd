/**
 * Aggregation of three upstreams of three kinds under one route: Streamable HTTP and WebSocket (each
 * an mcp-edge process of its own) and stdio (a child of the gateway's pool). The WebSocket upstream
 * is killed (SIGKILL) while one of its calls is in flight: that call, and the next ones, get an
 * `isError` result within the upstream's timeout; lists name it unavailable and keep the others';
 * the others keep answering. Restarted on the same port, it comes back: the health probe reconnects
 * (after 250 ms, then every 500 ms), and the session's next call opens a new connection with a new handshake.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { gatewayWith } from '../client/harness.ts'

t.setTimeout(90_000)
const fixture = fileURLToPath(new URL('./fixtures/echo-server.mjs', import.meta.url))
const text = (result: { content?: unknown }): string => ((result.content as Array<{ text: string }>)[0]!.text)
const TIMEOUT_S = 2

t.test('HTTP, WebSocket and stdio upstreams; the WebSocket one killed mid-call, then restarted', async (t) => {
  const http = await startGatewayProcess(t, { routes: [liveRoute] })
  let ws = await startGatewayProcess(t, { routes: [{ ...liveRoute, transports: ['websocket'] }] })
  const wsPort = Number(new URL(ws.url).port)
  const proxy = await gatewayWith(t, [{
    location: '/three',
    server: { name: 'three', version: '1.0.0' },
    upstreams: [
      { name: 'http', url: `${http.url}/live`, timeout: TIMEOUT_S },
      { name: 'ws', url: `ws://127.0.0.1:${wsPort}/live`, timeout: TIMEOUT_S, list_timeout: TIMEOUT_S, health_interval: 2 },
      { name: 'stdio', command: ['node', fixture], timeout: TIMEOUT_S },
    ],
  }])
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/three` }))
  await client.initialize()
  t.teardown(() => client.close())

  const names = (await client.listTools()).map((tool) => tool.name)
  for (const name of ['http__whoami', 'ws__whoami', 'stdio__echo']) t.ok(names.includes(name), `${name} listed`)
  const httpPid = JSON.parse(text(await client.callTool('http__whoami'))).pid as number
  const wsPid = JSON.parse(text(await client.callTool('ws__whoami'))).pid as number
  t.equal(JSON.parse(text(await client.callTool('stdio__echo', { marker: 'a' }))).marker, 'a', 'stdio answers')
  t.not(httpPid, wsPid, 'two upstream processes')

  // Killed with a call in flight.
  const inFlight = client.callTool('ws__slow', { steps: 100 })
  await new Promise((resolve) => setTimeout(resolve, 200))
  const killedAt = Date.now()
  await ws.stop('SIGKILL')
  const lost = await inFlight
  t.equal(lost.isError, true, 'the call in flight is an isError result')
  t.ok(Date.now() - killedAt < TIMEOUT_S * 1000 + 1000, `within the timeout (${Date.now() - killedAt} ms)`)

  const degraded = await client.request('tools/list', {})
  const left = (degraded.tools as Array<{ name: string }>).map((tool) => tool.name)
  t.ok(left.includes('http__whoami') && left.includes('stdio__echo'), 'the other two still list')
  t.notOk(left.some((name) => name.startsWith('ws__')), 'nothing of the dead one')
  t.same((degraded._meta as Record<string, unknown>)['mcp-edge/unavailable'], ['ws'], 'the list names the dead one')
  const started = Date.now()
  const refused = await client.callTool('ws__whoami')
  t.equal(refused.isError, true, 'a call to it is an isError result')
  t.match(text(refused), /upstream server "ws" is unavailable/, 'that says so')
  t.ok(Date.now() - started < TIMEOUT_S * 1000, 'at once, within the timeout')
  t.equal(JSON.parse(text(await client.callTool('http__whoami'))).pid, httpPid, 'HTTP answers on')
  t.equal(JSON.parse(text(await client.callTool('stdio__echo', { marker: 'b' }))).marker, 'b', 'stdio answers on')

  ws = await startGatewayProcess(t, { listen: { host: '127.0.0.1', port: wsPort }, routes: [{ ...liveRoute, transports: ['websocket'] }] })
  let back: { pid: number } | undefined
  for (const until = Date.now() + 15_000; back === undefined && Date.now() < until;) {
    const result = await client.callTool('ws__whoami')
    if (result.isError !== true) back = JSON.parse(text(result)) as { pid: number }
    else await new Promise((resolve) => setTimeout(resolve, 200))
  }
  if (back === undefined) throw new Error('the restarted upstream never came back')
  t.not(back.pid, wsPid, 'the restarted upstream answers (a new process)')
  const relisted = (await client.listTools()).map((tool) => tool.name)
  t.ok(relisted.includes('ws__whoami'), 'and is listed again')
  const ready = await (await fetch(`${proxy.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string }>> }
  t.same(Object.values(ready.upstreams['/three']!).map((u) => u.state), ['up', 'up', 'up'], '/readyz: all three up')
  const progress: number[] = []
  await client.callTool('ws__slow', { steps: 3 }, { onProgress: (p) => void progress.push(p) })
  t.same(progress, [1, 2, 3], 'the new connection relays progress (its relay installed anew)')
})
