/**
 * A proxy route on two gateway processes sharing a Redis, behind a round-robin forwarder, in front of
 * an upstream gateway process (the `live` fixture) reached through a recorder that logs every message
 * the upstream gets. One SDK session: its requests alternate between the processes, yet the upstream
 * sees one initialize (the upstream session is data in Redis), the sampling and elicitation answers
 * come back through the other process, a cancellation sent to the other process stops the upstream
 * call, setLevel and tagged logs flow, and DELETE ends the upstream session.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin, type Forwarded } from '../cluster/round-robin.ts'
import { startRedis } from '../store/redis-server.ts'

t.setTimeout(180_000)
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)
const params = (entry: Forwarded): Record<string, unknown> => (entry.body?.params ?? {}) as Record<string, unknown>

t.test('a proxied session over two processes on Redis: one upstream initialize, answers and cancellation across processes', async (t) => {
  const redis = await startRedis(t)
  const upstream = await startGatewayProcess(t, { routes: [liveRoute] })
  const recorder = await roundRobin(t, [upstream.url])
  const store = { type: 'redis', url: redis.url, key_prefix: 'proxy:' }
  const route = {
    location: '/live',
    server: { name: 'proxy', version: '1.0.0' },
    read_timeout: 5,
    upstreams: [{ name: 'live', url: `${recorder.url}/live`, headers: { authorization: 'Bearer upstream-secret' } }],
    prefix: 'never',
  }
  const [a, b] = (await Promise.all([startGatewayProcess(t, { store, routes: [route] }), startGatewayProcess(t, { store, routes: [route] })])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, [a.url, b.url])

  const logs: Array<{ level: string; logger?: string }> = []
  const client = new Client({ name: 'proxied', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } })
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: 'assistant',
    model: 'test-model',
    content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
  }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push({ level: n.params.level, logger: n.params.logger }) })
  const transport = new StreamableHTTPClientTransport(new URL(`${balancer.url}/live`), { requestInit: { headers: { authorization: 'Bearer downstream-token' } } })
  await client.connect(transport)
  t.teardown(() => client.close())

  const upstreamPid = JSON.parse(text(await client.callTool({ name: 'whoami' }))).pid as number
  for (let n = 0; n < 3; n++) t.equal(JSON.parse(text(await client.callTool({ name: 'whoami' }))).pid, upstreamPid, 'the upstream answers')
  const calls = balancer.log.filter((entry) => entry.body?.method === 'tools/call')
  t.same(new Set(calls.map((entry) => entry.target)), new Set([0, 1]), 'the calls reached both proxy processes')

  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model test-model said: echo hi', 'sampling relayed')
  t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Grace', 'elicitation relayed')
  const asked = balancer.log.find((entry) => params(entry).name === 'sample')?.target
  const answered = balancer.log.find((entry) => entry.body !== undefined && 'result' in entry.body && 'model' in (entry.body.result as object))?.target
  t.not(asked, answered, 'the sampling answer came in through the other process')

  const controller = new AbortController()
  const call = client.callTool({ name: 'slow', arguments: { steps: 50 } }, undefined, { signal: controller.signal, onprogress: () => undefined })
  await sleep(400)
  controller.abort('enough')
  await t.rejects(call, 'the client gave up')
  await sleep(300)
  const observed = JSON.parse(text(await client.callTool({ name: 'whoami' }))).observed as { aborted: boolean; completed: boolean }
  t.ok(observed.aborted && !observed.completed, 'the upstream call was cancelled')
  const ran = balancer.log.find((entry) => params(entry).name === 'slow')?.target
  const cancelled = balancer.log.find((entry) => entry.body?.method === 'notifications/cancelled')?.target
  t.not(ran, cancelled, 'notifications/cancelled reached the other process')
  const upstreamCancels = recorder.log.filter((entry) => entry.body?.method === 'notifications/cancelled')
  t.equal(upstreamCancels.length, 1, 'exactly one cancellation reached the upstream')

  await client.setLoggingLevel('warning')
  logs.length = 0
  await client.callTool({ name: 'levels' })
  t.same(logs.map((log) => log.level), ['warning', 'error'], 'the upstream filters at the forwarded level')
  t.ok(logs.every((log) => log.logger === 'live/levels'), 'messages are tagged with the upstream')

  const initializes = recorder.log.filter((entry) => entry.body?.method === 'initialize' && (params(entry).clientInfo as { name?: string }).name !== 'mcp-edge-health')
  t.equal(initializes.length, 1, 'one upstream initialize for the whole session, on two processes')
  t.same((params(initializes[0]!).capabilities as object), { sampling: {}, elicitation: { form: {} } }, "the downstream client's capabilities, unstripped")
  const forwarded = recorder.log.filter((entry) => entry.body?.method === 'tools/call').length
  t.equal(forwarded, calls.length + 5, 'every call reached the upstream once')

  await transport.terminateSession()
  for (let tries = 0; tries < 20 && !recorder.log.some((entry) => entry.method === 'DELETE'); tries++) await sleep(50)
  t.ok(recorder.log.some((entry) => entry.method === 'DELETE'), 'ending the session ended the upstream session')
  t.ok(recorder.log.every((entry) => entry.authorization === 'Bearer upstream-secret'), "the upstream got the route's credentials, never the client's")
  t.notOk(JSON.stringify([a.logs, b.logs]).includes('downstream-token'), 'the downstream token is in no log')
})
