// Per-upstream metrics of a stdio upstream: calls, latency, the pool's children, a child that dies
// counted as a restart, and health, as a scrape sees them.
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { gatewayWith } from '../e2e/harness.ts'
import { post, rawSession } from '../e2e/sse-reader.ts'

const stdioEcho = fileURLToPath(new URL('../../bench/servers/stdio-echo.mjs', import.meta.url))
const route = { location: '/stdio', upstreams: [{ name: 'echo', command: [process.execPath, stdioEcho], pool: { min: 1, max: 1 } }], server: { name: 'stdio', version: '1.0.0' } }

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((entry) => entry.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

t.test('a stdio upstream: calls, children, restarts, up', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/stdio`
  const sessionId = await rawSession(url)
  for (let id = 1; id <= 4; id++) {
    const text = await (await post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } })).text()
    t.match(text, `echo: m${id}`)
  }
  const scrape = async (): Promise<string> => (await fetch(`${gateway.url}/metrics`)).text()
  let text = await scrape()
  t.equal(sample(text, 'mcp_edge_upstream_calls_total{route="/stdio",upstream="echo"}'), 4, 'calls sent to the upstream')
  t.equal(sample(text, 'mcp_edge_upstream_duration_seconds_count{route="/stdio",upstream="echo"}'), 4)
  t.equal(sample(text, 'mcp_edge_upstream_up{route="/stdio",upstream="echo"}'), 1)
  t.equal(sample(text, 'mcp_edge_upstream_stdio_children{route="/stdio",upstream="echo"}'), 1, 'the pool\'s one child')
  t.equal(sample(text, 'mcp_edge_upstream_stdio_restarts_total{route="/stdio",upstream="echo"}'), 0)
  t.equal(sample(text, 'mcp_edge_calls_total{route="/stdio",method="tools/call",component="echo"}'), 4, 'the tool, named once the upstream served it')

  const proxy = gateway.endpoints.get('/stdio')!.extension as unknown as { stdio: { status(): Array<{ children: Array<{ pid: number }> }> } }
  const pid = proxy.stdio.status()[0]!.children[0]!.pid
  process.kill(pid, 'SIGKILL')
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    text = await scrape()
    if (sample(text, 'mcp_edge_upstream_stdio_restarts_total{route="/stdio",upstream="echo"}') === 1 && sample(text, 'mcp_edge_upstream_stdio_children{route="/stdio",upstream="echo"}') === 1) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(sample(text, 'mcp_edge_upstream_stdio_restarts_total{route="/stdio",upstream="echo"}'), 1, 'the killed child counted')
  t.equal(sample(text, 'mcp_edge_upstream_stdio_children{route="/stdio",upstream="echo"}'), 1, 'and replaced (pool.min)')
  t.not(proxy.stdio.status()[0]!.children[0]!.pid, pid)
})
