/**
 * Aggregation: a proxy route in front of a Streamable HTTP upstream (the echo handler, in this
 * process) and a WebSocket upstream (the live fixture, in a process of its own), beside a local
 * handler. Names are prefixed, filtered and renamed; resources route by URI; completion and prompts
 * reach the right upstream; pagination crosses upstreams; then the WebSocket upstream is killed and
 * the route keeps serving the rest, saying what is missing.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { gatewayWith } from '../client/harness.ts'

t.setTimeout(120_000)
const echo = fileURLToPath(new URL('../../handlers/echo.ts', import.meta.url))
const text = (result: { content?: unknown }): string => ((result.content as Array<{ text: string }>)[0]!.text)

t.test('two upstreams (HTTP, WebSocket) and a local handler under one route; one upstream killed mid-test', async (t) => {
  const docs = await gatewayWith(t, [{ location: '/docs', handler: echo, server: { name: 'docs', version: '1.0.0' } }])
  const ws = await startGatewayProcess(t, { routes: [{ ...liveRoute, transports: ['websocket'] }] })
  const proxy = await gatewayWith(t, [{
    location: '/agg',
    handler: fixtureHandler(),
    server: { name: 'agg', version: '1.0.0' },
    upstreams: [
      { name: 'docs', url: `${docs.url}/docs` },
      { name: 'live', url: `${ws.url.replace('http:', 'ws:')}/live`, timeout: 2, list_timeout: 2, health_interval: 60 },
    ],
    tools: { deny: ['live__impatient', 'live__broadcast'], rename: { docs__echo: 'say' } },
    pagination: { tools: 1 },
    // Every list asks the upstreams here, so the one killed below is missed at once. With the list
    // cache (on by default) a list would be answered from what was kept until the upstream's health
    // probe saw it go (then its lists are dropped): test/upstream/list-cache-*.test.ts.
    list_cache: false,
  }])
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/agg` }))
  await client.initialize()
  t.teardown(() => client.close())

  const tools = (await client.listTools()).map((tool) => tool.name)
  t.ok(tools.includes('local_hello'), 'the local tool, unprefixed')
  t.ok(tools.includes('say'), 'docs__echo renamed')
  t.ok(tools.includes('live__whoami') && tools.includes('live__slow'), 'the WebSocket upstream, prefixed')
  t.notOk(tools.includes('live__impatient') || tools.includes('live__broadcast'), 'denied tools are hidden')
  t.ok(tools.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name)), 'every name fits ^[a-zA-Z0-9_-]{1,64}$')
  t.equal(new Set(tools).size, tools.length, 'no name twice across pages (pagination crosses upstreams)')

  t.equal(text(await client.callTool('say', { message: 'hi' })), 'Tool echo: hi', 'a renamed tool reaches its upstream')
  t.equal(text(await client.callTool('local_hello')), 'hello from the route', 'a local tool stays local')
  t.ok(JSON.parse(text(await client.callTool('live__whoami'))).pid > 0, 'a call over WebSocket')
  await t.rejects(client.callTool('docs__echo', { message: 'x' }), { code: -32602 }, 'the old name of a renamed tool is unknown')
  const progress: number[] = []
  await client.callTool('live__slow', { steps: 2 }, { onProgress: (p) => void progress.push(p) })
  t.same(progress, [1, 2], 'progress from the WebSocket upstream, tokens mapped')

  t.equal(((await client.readResource('echo://readme')).contents[0] as { text: string }).text.slice(0, 13), 'Read echo://<', 'a listed resource routes to its upstream')
  t.equal(((await client.readResource('echo://abc')).contents[0] as { text: string }).text, 'Resource echo: abc', 'a template match routes, URI unchanged')
  await t.rejects(client.readResource('nowhere://x'), { code: -32002 }, 'an unknown URI')
  const prompt = await client.getPrompt('docs__echo', { message: 'm' })
  t.match(JSON.stringify(prompt.messages), /Please process this message: m/, 'prompts are prefixed and routed')
  const completion = await client.completeResource('echo://{message}', 'message', 'hel')
  t.same(completion.values, ['hello', 'hello world', 'help'], 'completion forwarded to the template owner')

  const ready = await (await fetch(`${proxy.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string }>> }
  t.equal(ready.upstreams['/agg']!.docs!.state, 'up')
  t.equal(ready.upstreams['/agg']!.live!.state, 'up')

  await ws.stop('SIGKILL')
  const degraded = await client.request('tools/list', {})
  const names = (degraded.tools as Array<{ name: string }>).map((tool) => tool.name)
  t.ok(names.includes('say') && names.includes('local_hello'), 'the healthy upstream and the local handler still list')
  t.notOk(names.some((name) => name.startsWith('live__')), 'nothing of the dead upstream')
  t.same((degraded._meta as Record<string, unknown>)['mcp-edge/unavailable'], ['live'], 'the list says which upstream is missing')
  const down = await client.callTool('live__whoami')
  t.equal(down.isError, true, 'a call to its tool is an isError result')
  t.match(text(down), /upstream server "live" is unavailable/, 'that says so')
  t.equal(text(await client.callTool('say', { message: 'still' })), 'Tool echo: still', 'the other upstream serves on')
  const after = await (await fetch(`${proxy.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string; reason?: string }>> }
  t.equal(after.upstreams['/agg']!.live!.state, 'down', '/readyz reports it down')
  t.notMatch(after.upstreams['/agg']!.live!.reason ?? '', /ws:|127\.0\.0\.1/, 'without its address')
})

t.test('a cursor the route did not make is refused', async (t) => {
  const docs = await gatewayWith(t, [{ location: '/docs', handler: echo, server: { name: 'docs', version: '1.0.0' } }])
  const proxy = await gatewayWith(t, [{ location: '/p', server: { name: 'p', version: '1.0.0' }, upstreams: [{ name: 'docs', url: `${docs.url}/docs` }] }])
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/p` }))
  await client.initialize()
  t.teardown(() => client.close())
  for (const cursor of ['abc', 'mcpe1.!!!', `mcpe1.${Buffer.from('{"u":{"other":"x"}}').toString('base64url')}`]) {
    await t.rejects(client.request('tools/list', { cursor }), { code: -32602 }, `cursor ${cursor}`)
  }
  t.same((await client.listTools()).map((tool) => tool.name), ['echo'], 'a single upstream is not prefixed (prefix: auto)')
})

function fixtureHandler(): string {
  return fileURLToPath(new URL('./fixtures/local-hello.ts', import.meta.url))
}
