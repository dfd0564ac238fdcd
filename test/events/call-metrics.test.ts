// Per-component metrics from the call events: what a scrape sees after real calls, hostile names
// included, on the hot path and on Fastify's path alike.
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { gatewayWith } from '../e2e/harness.ts'
import { post, rawSession } from '../e2e/sse-reader.ts'
import { MAX_COMPONENTS_PER_ROUTE } from '../../gateway/events/call-events.ts'

const echo = fileURLToPath(new URL('../../handlers/echo.ts', import.meta.url))
const route = { location: '/mcp', handler: echo, server: { name: 'echo', version: '1.0.0' } }

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((entry) => entry.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

t.test('calls, errors by kind and latency per tool; hostile method and tool names collapse', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/mcp`
  const sessionId = await rawSession(url)
  const servedBefore = gateway.hotPosts.served
  for (let id = 1; id <= 3; id++) await (await post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } })).text()
  t.ok(gateway.hotPosts.served > servedBefore, 'the hot path served these calls')
  // Fastify's path: a request the hot path hands back (no Content-Length: chunked).
  await (await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
    body: new Blob([JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } })]).stream(),
    duplex: 'half',
  } as RequestInit)).text()
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: {} } })).text()
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 6, method: 'prompts/get', params: { name: 'echo', arguments: { message: 'p' } } })).text()
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'echo://hello' } })).text()
  // Hostile: invented tool names and methods, many more than the cap.
  for (let id = 0; id < MAX_COMPONENTS_PER_ROUTE + 50; id++) {
    await (await post(url, sessionId, { jsonrpc: '2.0', id: 100 + id, method: 'tools/call', params: { name: `evil-${id}-${'x'.repeat(40)}` } })).text()
    if (id % 10 === 0) await (await post(url, sessionId, { jsonrpc: '2.0', id: 10_000 + id, method: `evil/${id}`, params: {} })).text()
  }
  const text = await (await fetch(`${gateway.url}/metrics`)).text()
  t.equal(sample(text, 'mcp_edge_calls_total{route="/mcp",method="tools/call",component="echo"}'), 5, 'both paths counted, and the invalid call too')
  t.equal(sample(text, 'mcp_edge_call_errors_total{route="/mcp",method="tools/call",component="echo",kind="tool_error"}'), 1, 'the call without its argument: an isError result')
  t.equal(sample(text, 'mcp_edge_calls_total{route="/mcp",method="prompts/get",component="echo"}'), 1)
  t.equal(sample(text, 'mcp_edge_calls_total{route="/mcp",method="resources/read",component="echo://{message}"}'), 1, 'a resource read is labelled by its template')
  t.equal(sample(text, 'mcp_edge_call_duration_seconds_count{route="/mcp",method="tools/call",component="echo"}'), 5)
  t.equal(sample(text, 'mcp_edge_calls_total{route="/mcp",method="tools/call",component="_other"}'), MAX_COMPONENTS_PER_ROUTE + 50, 'every invented name under one label')
  t.notOk(text.includes('evil'), 'no invented name or method reaches a label')
  const series = text.split('\n').filter((line) => line.startsWith('mcp_edge_call'))
  const labelSets = new Set(series.map((line) => line.replace(/^[a-z_]+/, "").replace(/,?le="[^"]*"/, "").replace(/ .*$/, "")))
  t.ok(labelSets.size <= 12, `the call series stay few (${labelSets.size} label sets)`)
})
