// deploy/nginx/mcp-edge.conf for real: Debian's nginx, run by the test with that very file (only the
// upstream addresses and the listen port swapped for loopback ones), in front of two gateway
// processes sharing one Redis. A whole SDK session passes through it with every request landing on
// either gateway: sampling, elicitation, progress, cancellation, subscriptions; a stream cut mid-way
// resumes with Last-Event-ID; a WebSocket session upgrades through it.
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { McpClient, WebSocketTransport } from '../../gateway/client/index.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { nonStickySession } from '../cluster/non-sticky.ts'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'
import { reapOnExit } from '../store/reaper.ts'
import { freePort, startRedis } from '../store/redis-server.ts'

const nginxBinary = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => spawnSync(file, ['-v']).status === 0)
if (nginxBinary === undefined) {
  t.fail('nginx is not installed (.ci/run installs Debian\'s nginx)')
  process.exit(1)
}

t.setTimeout(180_000)
const shipped = readFileSync(fileURLToPath(new URL('../../deploy/nginx/mcp-edge.conf', import.meta.url)), 'utf8')

const redis = await startRedis(t)
const store = { type: 'redis', url: redis.url, key_prefix: 'nginx:', command_timeout: 2, connect_timeout: 2 }
const route = { ...liveRoute, transports: ['streamable_http', 'websocket'] }
const gateways = (await Promise.all([
  startGatewayProcess(t, { store, routes: [route] }),
  startGatewayProcess(t, { store, routes: [route] }),
])) as [GatewayProcess, GatewayProcess]

/** The shipped file with its upstream servers and listen port made loopback ones; nothing else changed. */
function localised(conf: string, port: number): string {
  const servers = conf.match(/^\s*server gateway-\d+:8080[^;]*;$/gm) ?? []
  // The file's shape is part of what this test checks: a change that drops a gateway or the port breaks it.
  if (servers.length !== 2) throw new Error(`deploy/nginx/mcp-edge.conf lists ${servers.length} gateways, not 2`)
  let next = 0
  const upstreams = conf.replace(/^(\s*)server gateway-\d+:8080([^;]*);$/gm, (_line, indent: string, rest: string) => `${indent}server ${new URL(gateways[next++]!.url).host}${rest};`)
  if (!/^\s*listen 80;$/m.test(upstreams)) throw new Error('deploy/nginx/mcp-edge.conf no longer listens on 80')
  return upstreams.replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`)
}

const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-nginx-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const port = await freePort()
writeFileSync(path.join(folder, 'mcp-edge.conf'), localised(shipped, port))
for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(folder, temp))
writeFileSync(path.join(folder, 'nginx.conf'), `
worker_processes 1;
events { worker_connections 512; }
http {
  access_log ${folder}/access.log;
  client_body_temp_path ${folder}/body;
  proxy_temp_path ${folder}/proxy;
  fastcgi_temp_path ${folder}/fastcgi;
  uwsgi_temp_path ${folder}/uwsgi;
  scgi_temp_path ${folder}/scgi;
  include ${folder}/mcp-edge.conf;
}
`)
const nginx = spawn(nginxBinary, ['-p', folder, '-c', path.join(folder, 'nginx.conf'), '-g', `daemon off; master_process on; pid ${folder}/nginx.pid; error_log ${folder}/error.log warn;`], { stdio: ['ignore', 'ignore', 'pipe'] })
reapOnExit(nginx)
let nginxErrors = ''
nginx.stderr!.setEncoding('utf8').on('data', (chunk: string) => (nginxErrors += chunk))
t.teardown(async () => {
  if (nginx.exitCode !== null) return
  nginx.kill('SIGQUIT')
  await once(nginx, 'exit')
})
const balancer = `http://127.0.0.1:${port}`
for (let tries = 0; ; tries++) {
  const up = await fetch(`${balancer}/healthz`).then((answer) => answer.status, () => 0)
  if (up === 200) break
  if (tries > 100 || nginx.exitCode !== null) throw new Error(`nginx did not come up: ${nginxErrors}`)
  await sleep(50)
}

t.test('a whole SDK session through nginx, its requests spread over both gateways', async (t) => {
  // nginx keeps no log the forwarder's way; the session's own `whoami` calls show both gateways served it.
  await nonStickySession(t, { balancer: { url: balancer, log: [] }, processes: 2 })
})

t.test('a POST stream cut after event k resumes through nginx with exactly k+1…, in order, once', async (t) => {
  const sessionId = await rawSession(`${balancer}/live`)
  const cut = new AbortController()
  // 30 steps of 40 ms: a buffering proxy would hold the events until the call ends, 1.2 s later.
  const sent = Date.now()
  const response = await post(`${balancer}/live`, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 30 }, _meta: { progressToken: 'p' } } }, cut.signal)
  t.equal(response.headers.get('content-type'), 'text/event-stream', 'progress makes it a stream, not buffered by nginx')
  const reader = new SseReader(response)
  t.equal((await reader.next())!.data, '', 'the priming event')
  const first = (await reader.next())!
  const k = (await reader.next())!
  t.same([first, k].map((event) => JSON.parse(event.data).params.progress), [1, 2], 'progress events arrive one by one')
  t.ok(Date.now() - sent < 1000, 'and as they are written (proxy_buffering off, and the gateway says X-Accel-Buffering: no), long before the call ends')
  cut.abort()

  const resumed = await fetch(`${balancer}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': k.id! } })
  t.equal(resumed.status, 200, 'the resume is accepted by whichever gateway nginx picked')
  const events = await new SseReader(resumed).rest()
  const messages = events.map((event) => JSON.parse(event.data))
  t.same(messages.slice(0, -1).map((message) => message.params.progress), Array.from({ length: 28 }, (_, n) => n + 3), 'the missed events, then the live ones: in order, once')
  t.same(messages.at(-1), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done after 30 steps' }] } }, 'then the response')
})

t.test('a WebSocket session upgrades through nginx', async (t) => {
  const client = new McpClient(new WebSocketTransport({ url: `ws://127.0.0.1:${port}/live` }))
  t.teardown(() => client.close())
  await client.initialize()
  const pids = new Set<number>()
  for (let n = 0; n < 3; n++) {
    const result = await client.callTool('whoami', {})
    pids.add(JSON.parse((result.content[0] as { text: string }).text).pid as number)
  }
  t.equal(pids.size, 1, 'one WebSocket is one connection to one gateway')
  t.ok(gateways.some((gateway) => gateway.logs.some((line) => line.pid === [...pids][0])), 'served by one of the two gateways')
})
