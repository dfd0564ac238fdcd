/**
 * Keep-alive behind nginx (issue 26): the gateway announced `Keep-Alive: timeout=5` and closed idle
 * connections at ~5 s (the 72 s set for Fastify's own server never reached the port `mcp-edge start`
 * listens on, FrontServer's), while the shipped nginx keeps its upstream connections 60 s: a POST
 * nginx sent on a connection the gateway was closing came back 502 (1 in 123 in one sweep). Now the
 * gateway keeps idle connections `connections.keepalive_timeout` (75 s), longer than the shipped
 * nginx's upstream `keepalive_timeout`, so nginx closes first. Through a real `mcp-edge start` and
 * the shipped deploy/nginx/mcp-edge.conf, with a TCP relay between them counting the connections.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { tcpRelay } from '../upstream/tcp-relay.ts'
import { nginxBinary, shippedConf, startNginx } from './nginx-process.ts'

if (nginxBinary === undefined) {
  t.fail('nginx is not installed (.ci/run installs Debian\'s nginx)')
  process.exit(1)
}
t.setTimeout(240_000)

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
const GATEWAY_KEEPALIVE_S = 75

t.test('the shipped nginx keeps upstream connections for less time than the gateway does', async (t) => {
  const nginxSeconds = Number(/^\s*keepalive_timeout\s+(\d+)s;/m.exec(shippedConf)?.[1])
  t.ok(nginxSeconds > 0, `the shipped upstream keepalive_timeout: ${nginxSeconds} s`)
  t.ok(nginxSeconds < GATEWAY_KEEPALIVE_S, `shorter than the gateway's ${GATEWAY_KEEPALIVE_S} s`)
})

t.test('through nginx, idle periods around the old 5-6 s boundary: the connection is kept, no 502', async (t) => {
  // One process on the memory store: `mcp-edge start` as shipped, listening through its FrontServer.
  const gateway = await startGatewayProcess(t, { routes: [liveRoute] })
  const direct = await fetch(`${gateway.url}/healthz`)
  await direct.text()
  t.equal(direct.headers.get('keep-alive'), `timeout=${GATEWAY_KEEPALIVE_S}`, 'the port mcp-edge start listens on announces the configured keep-alive')

  const relay = await tcpRelay(t, Number(new URL(gateway.url).port))
  const upstream = `127.0.0.1:${relay.port}`
  const { url: balancer } = await startNginx(t, [upstream, upstream])

  const init = await fetch(`${balancer}/live`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'keepalive', version: '1' } } }) })
  await init.text()
  const session = { ...HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id')! }
  const ping = async (id: number): Promise<number> => {
    const answer = await fetch(`${balancer}/live`, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }) })
    await answer.text()
    return answer.status
  }
  t.equal(await ping(1), 200)
  const opened = relay.accepted

  // nginx sends each request on its idle upstream connection; the gateway used to close it at 5 s.
  const statuses: number[] = []
  for (const idleMs of [4900, 5000, 5100, 5300, 5600, 6000, 6500]) {
    await sleep(idleMs)
    statuses.push(await ping(statuses.length + 2))
  }
  t.same(statuses, statuses.map(() => 200), `no 502 after idle periods of 4.9 to 6.5 s (${statuses.join(', ')})`)
  t.equal(relay.accepted, opened, `nginx kept using its upstream connection (${relay.accepted - opened} new ones after idle periods)`)
})
