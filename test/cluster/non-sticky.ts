// One whole session driven by the official SDK client through a round-robin forwarder, so consecutive
// requests land on different processes. Written once, run for two gateway hosts sharing a Redis and
// for one host with `workers: 2` and the cluster store. What a process observed comes back in results
// (the `whoami` tool), since the processes are not this one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { RoundRobin } from './round-robin.ts'

const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

interface Whoami { pid: number; observed: { aborted: boolean; completed: boolean } }

export interface NonStickyOptions {
  /** The forwarder in front of the gateways. */
  balancer: RoundRobin
  /** Base URLs that reach each process directly, when the processes have their own ports. */
  direct?: string[]
  /** How many processes serve (their pids must all show up). */
  processes: number
}

/** Where the forwarder sent the POST whose JSON-RPC body `match` accepts. */
function targetOf(balancer: RoundRobin, match: (body: Record<string, unknown>) => boolean): number | undefined {
  return balancer.log.find((entry) => entry.body !== undefined && match(entry.body))?.target
}

export async function nonStickySession(t: Test, { balancer, direct, processes }: NonStickyOptions): Promise<void> {
  const messages: string[] = []
  const updates: string[] = []
  const client = new Client({ name: 'non-sticky', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } })
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: 'assistant',
    model: 'test-model',
    content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
  }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { messages.push(String(n.params.level)) })
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri) })
  const transport = new StreamableHTTPClientTransport(new URL(`${balancer.url}/live`))
  await client.connect(transport)
  t.teardown(() => client.close())
  const sessionId = transport.sessionId!
  const whoami = async (): Promise<Whoami> => JSON.parse(text(await client.callTool({ name: 'whoami' }))) as Whoami
  const pids = new Set<number>()

  // Consecutive requests reach different processes, all in one session.
  for (let n = 0; n < 2 * processes; n++) pids.add((await whoami()).pid)
  t.equal(pids.size, processes, `the session's requests were served by ${processes} processes`)

  // Sampling and elicitation: the client's answer is a new POST, so it reaches another process, which
  // hands it over the bus to the one waiting.
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model test-model said: echo hi')
  t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Grace')
  if (direct !== undefined) {
    const asked = targetOf(balancer, (body) => (body.params as { name?: string } | undefined)?.name === 'sample')
    const answered = targetOf(balancer, (body) => 'result' in body && typeof body.id === 'string' && 'model' in (body.result as object))
    t.not(asked, answered, 'the sampling answer reached the other process')
  }

  // Cancellation: notifications/cancelled is another POST, so another process; the handler still stops.
  const controller = new AbortController()
  const call = client.callTool({ name: 'slow', arguments: { steps: 50 } }, undefined, { signal: controller.signal, onprogress: () => undefined })
  await sleep(300)
  controller.abort('enough')
  await t.rejects(call, 'the client gave up')
  await sleep(200)
  const seen: Whoami[] = []
  for (let n = 0; n < processes; n++) seen.push(await whoami())
  t.ok(seen.some((w) => w.observed.aborted && !w.observed.completed), 'the process running `slow` saw the cancellation')
  if (direct !== undefined) {
    const ran = targetOf(balancer, (body) => (body.params as { name?: string } | undefined)?.name === 'slow')
    const cancelled = targetOf(balancer, (body) => body.method === 'notifications/cancelled')
    t.not(ran, cancelled, 'notifications/cancelled reached the other process')
  }

  // logging/setLevel on one process applies on every process.
  await client.setLoggingLevel('warning')
  // The level is in the store at once; another process drops its cached copy of the record when the
  // store's bus tells it, a few milliseconds later (on a loaded machine the next call could beat it).
  await sleep(150)
  messages.length = 0
  for (let n = 0; n < processes; n++) await client.callTool({ name: 'levels' })
  t.same(messages, Array.from({ length: processes }, () => ['warning', 'error']).flat(), 'every process filtered at warning')

  // subscribe on one process; resourceUpdated fired on the others reaches the GET stream wherever it is.
  await client.subscribeResource({ uri: 'live://counter' })
  for (let tries = 0; updates.length === 0 && tries < 30; tries++) {
    // The SDK opens its GET stream in the background; until it is open, updates wait in the log.
    await client.callTool({ name: 'touch' })
    await sleep(100)
  }
  t.ok(updates.length > 0, 'an update reached the GET stream')
  const before = updates.length
  for (let n = 0; n < processes; n++) await client.callTool({ name: 'touch' })
  for (let tries = 0; updates.length < before + processes && tries < 40; tries++) await sleep(50)
  t.equal(updates.length, before + processes, 'a touch on every process reached the GET stream')

  // DELETE on one process: every process forgets the session.
  await transport.terminateSession()
  const ping = (base: string) => fetch(`${base}/live`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
  })
  for (const base of direct ?? Array.from({ length: processes }, () => balancer.url)) {
    t.equal((await ping(base)).status, 404, `${base}: the deleted session is unknown`)
  }
}
