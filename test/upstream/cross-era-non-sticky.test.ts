/**
 * Across the eras, without sticky sessions: two gateway processes on one Redis behind a round-robin
 * forwarder, each with its own server-everything child over stdio (2025-11-25 only). The v2 client's
 * call parks on one process; its retry lands on the other, which cannot reach that child, and goes
 * over the bus to the process holding the parked call: the call resumes there, nothing runs twice.
 * Then a call that asks, then works with progress: the resumed round's progress crosses back over
 * the bus, and the client giving up on the other process cancels the upstream call on the first.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin, type Forwarded } from '../cluster/round-robin.ts'
import { startRedis } from '../store/redis-server.ts'
import { eventually } from '../client/harness.ts'
import { everythingServer as everything } from '../fixtures/everything-server.ts'

t.setTimeout(120_000)
const askThenWait = fileURLToPath(new URL('./fixtures/ask-then-wait.mjs', import.meta.url))
const texts = (result: { content?: unknown }): string => ((result.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n')
const paramsOf = (entry: Forwarded): Record<string, unknown> => (entry.body?.params ?? {}) as Record<string, unknown>

t.test('a stateless retry lands on the other process and resumes the call parked on the first', async (t) => {
  const redis = await startRedis(t)
  const route = {
    location: '/everything',
    server: { name: 'proxy', version: '1.0.0' },
    read_timeout: 10,
    upstreams: [{ name: 'everything', command: ['node', everything, 'stdio'], timeout: 20 }],
    prefix: 'never',
  }
  const folder = mkdtempSync(path.join(tmpdir(), 'cross-era-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const journal = path.join(folder, 'journal')
  const waiting = {
    location: '/wait',
    server: { name: 'wait', version: '1.0.0' },
    read_timeout: 10,
    upstreams: [{ name: 'wait', command: ['node', askThenWait], env: { FIXTURE_JOURNAL: journal }, timeout: 20 }],
    prefix: 'never',
  }
  const config = { store: { type: 'redis', url: redis.url, key_prefix: 'cross:' }, request_state: { key: 'cross-era-shared-key-0123456789' }, routes: [route, waiting] }
  const [a, b] = (await Promise.all([startGatewayProcess(t, config), startGatewayProcess(t, config)])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, [a.url, b.url])

  const asked: string[] = []
  const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: 'auto' } })
  client.setRequestHandler('elicitation/create', async () => {
    asked.push('elicitation')
    return { action: 'accept', content: { name: 'Grace Hopper' } }
  })
  client.setRequestHandler('sampling/createMessage', async () => {
    asked.push('sampling')
    return { role: 'assistant', model: 'echo-model', content: { type: 'text', text: 'from the other side' } }
  })
  await client.connect(new TransportV2(new URL(`${balancer.url}/everything`)))
  t.teardown(() => client.close())
  t.equal(client.getProtocolEra(), 'modern')

  t.match(texts(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })), /Grace Hopper/, 'the elicitation round')
  t.match(texts(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } })), /from the other side/, 'the sampling round')
  t.same(asked, ['elicitation', 'sampling'], 'each question asked once')

  for (const tool of ['trigger-elicitation-request', 'trigger-sampling-request']) {
    const rounds = balancer.log.filter((entry) => entry.body?.method === 'tools/call' && paramsOf(entry).name === tool)
    t.equal(rounds.length, 2, `${tool}: the call and its retry`)
    t.ok(rounds[0]!.body !== undefined && paramsOf(rounds[0]!).requestState === undefined && typeof paramsOf(rounds[1]!).requestState === 'string', 'the second is the retry')
    t.not(rounds[0]!.target, rounds[1]!.target, `${tool}: the retry reached the other process`)
  }

  const waiter = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } })
  const controller = new AbortController()
  const progress: number[] = []
  waiter.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { go: true } }))
  await waiter.connect(new TransportV2(new URL(`${balancer.url}/wait`)))
  t.teardown(() => waiter.close())
  const gaveUp = waiter.callTool({ name: 'ask_then_wait', arguments: {} }, {
    signal: controller.signal,
    onprogress: (p: { progress: number }) => {
      progress.push(p.progress)
      if (progress.length === 3) controller.abort()
    },
  })
  await t.rejects(gaveUp, 'the client gave up during the resumed round')
  t.ok(progress.length >= 3, "the resumed round's progress came back over the bus")
  await eventually(() => readFileSync(journal, 'utf8').includes('cancelled'), 10_000)
  t.same(readFileSync(journal, 'utf8').trim().split('\n'), ['called', 'answered accept', 'cancelled'], 'the upstream call was cancelled on the process holding it')
  const rounds = balancer.log.filter((entry) => entry.body?.method === 'tools/call' && paramsOf(entry).name === 'ask_then_wait')
  t.equal(rounds.length, 2)
  t.not(rounds[0]!.target, rounds[1]!.target, 'the retry, and so the cancellation, came through the other process')

  const logs = [...a.logs, ...b.logs]
  t.notOk(logs.some((line) => String(line.msg).includes('parked call is gone')), 'both retries resumed the parked call (none replayed it)')
  t.ok(logs.every((line) => line.level === undefined || Number(line.level) < 50), 'no process logged an error')
})
