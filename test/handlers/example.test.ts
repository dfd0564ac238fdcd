/**
 * End to end: the example deployment handler (handlers/example.ts) as config/gateway.yaml serves it at
 * `/example`, on a real gateway on loopback, driven by the official MCP SDK client. Each test starts
 * its own gateway, so each starts from the seeded fleet.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import { connect } from '../e2e/harness.ts'
import { eventually } from '../fixtures/waiting.ts'

const STEP_MS = 25
const STATUS = 'example://deployments/status'
interface Test { teardown(fn: () => unknown): void }

async function start(t: Test): Promise<Gateway & { example: string }> {
  const config = await loadConfig(DEFAULT_CONFIG_FILE)
  config.listen = { host: '127.0.0.1', port: 0 }
  config.log.level = 'silent'
  const route = config.routes.find((r) => r.location === '/example')!
  route.options = { ...route.options, step_ms: STEP_MS }
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  return Object.assign(gateway, { example: `${gateway.url}/example` })
}

const text = (result: { [key: string]: unknown }) => (result.content as { text: string }[])[0]!.text
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))


// `any`: parsed JSON from the wire, checked by the assertions that read it.
async function readJson(client: Client, uri: string): Promise<any> {
  const { contents } = await client.readResource({ uri })
  return JSON.parse((contents[0] as { text: string }).text)
}

/** resources/updated travels on the session's GET stream: wait until the SDK client has opened it. */
function streamOpen(gateway: Gateway, client: Client): Promise<void> {
  const sessionId = (client as unknown as { _transport: { sessionId: string } })._transport.sessionId
  return eventually(() => gateway.endpoints.get('/example')!.live.get(sessionId)?.outlet !== undefined)
}

/** A client that answers elicitation/create with the next queued answer and keeps the requests. */
async function confirmingClient(t: Test, gateway: { example: string }, answers: ElicitResult[]) {
  const asked: ElicitRequest['params'][] = []
  const client = await connect(t, gateway.example, { elicitation: { form: {} } }, (c) =>
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params)
      return answers.shift() ?? { action: 'cancel' }
    }))
  return { client, asked }
}

t.test('lists the components with their metadata', async (t) => {
  const client = await connect(t, (await start(t)).example)
  t.match(client.getServerVersion(), { name: 'deployments', title: 'Deployments (example)' })
  const { tools } = await client.listTools()
  t.match(tools, [
    {
      name: 'deploy',
      title: 'Deploy a service',
      inputSchema: { required: ['service', 'environment', 'version'] },
      outputSchema: { type: 'object', required: Array },
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    { name: 'rollback', title: 'Roll back a service', annotations: { destructiveHint: true } },
  ])
  t.match((await client.listResources()).resources, [{ uri: STATUS, mimeType: 'application/json' }])
  t.match((await client.listResourceTemplates()).resourceTemplates, [{ uriTemplate: 'example://services/{service}/history' }])
  t.match((await client.listPrompts()).prompts, [
    { name: 'release_notes', arguments: [{ name: 'service', required: true }, { name: 'version' }] },
  ])
})

t.test('deploy reports five steps of progress and returns structured content', async (t) => {
  const client = await connect(t, (await start(t)).example)
  const seen: { progress: number; total?: number; message?: string }[] = []
  const result = await client.callTool(
    { name: 'deploy', arguments: { service: 'payments', environment: 'production', version: '1.4.2' } },
    undefined,
    { onprogress: (p) => seen.push(p) },
  )
  t.same(seen, [
    { progress: 1, total: 5, message: 'Checked payments 1.4.2 against the release policy' },
    { progress: 2, total: 5, message: 'Built image registry.internal/payments:1.4.2' },
    { progress: 3, total: 5, message: 'Applied database migrations' },
    { progress: 4, total: 5, message: 'Rolled out to 3 instances' },
    { progress: 5, total: 5, message: 'Health checks passed' },
  ])
  t.notOk(result.isError)
  const structured = { service: 'payments', environment: 'production', version: '1.4.2', previous_version: '1.4.1', instances: 3 }
  t.same(result.structuredContent, structured)
  t.same(JSON.parse(text(result)), structured, 'the same as JSON text for clients that ignore structure')
  t.same((await readJson(client, STATUS)).production.payments, { version: '1.4.2', previous: '1.4.1', state: 'live' })
})

t.test('deploy refuses what the release policy forbids, before any work', async (t) => {
  const client = await connect(t, (await start(t)).example)
  const seen: unknown[] = []
  const refused = await client.callTool(
    { name: 'deploy', arguments: { service: 'search', environment: 'production', version: '1.0.0' } },
    undefined,
    { onprogress: (p) => seen.push(p) },
  )
  t.equal(refused.isError, true)
  t.equal(text(refused), 'search 1.0.0 must be deployed to staging before production.')
  t.same(seen, [], 'no progress')
  const invalid = await client.callTool({ name: 'deploy', arguments: { service: 'search', environment: 'staging', version: 'latest' } })
  t.equal(invalid.isError, true)
  t.match(text(invalid), /Invalid arguments/)
})

t.test('cancelling a deploy stops it, cleans up and sends no result', async (t) => {
  const gateway = await start(t)
  const client = await connect(t, gateway.example)
  const controller = new AbortController()
  const seen: number[] = []
  const call = client.callTool({ name: 'deploy', arguments: { service: 'payments', environment: 'staging', version: '1.5.0' } }, undefined, {
    signal: controller.signal,
    onprogress: (p) => {
      seen.push(p.progress)
      if (p.progress === 2) controller.abort('changed my mind')
    },
  })
  await t.rejects(call, 'the client gives up')
  const outcomes = async () => ((await readJson(client, 'example://services/payments/history')).history as { version: string; outcome: string }[])
    .filter((entry) => entry.version === '1.5.0').map((entry) => entry.outcome)
  await eventually(async () => (await outcomes()).length > 0)
  await sleep(STEP_MS * 6) // longer than the remaining steps would have taken
  t.same(await outcomes(), ['cancelled'], 'recorded as cancelled, never deployed')
  t.same(seen, [1, 2], 'no progress after the cancellation')
  t.same((await readJson(client, STATUS)).staging.payments, { version: '1.4.2', previous: '1.4.1', state: 'live' }, 'nothing changed')
  t.same(await client.ping(), {}, 'the session goes on')
})

t.test('logging/setLevel filters the deploy log', async (t) => {
  const messages: string[] = []
  const client = await connect(t, (await start(t)).example, {}, (c) =>
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { messages.push(`${n.params.level}:${n.params.logger}`) }))
  await client.callTool({ name: 'deploy', arguments: { service: 'checkout', environment: 'staging', version: '3.0.0' } })
  t.same(messages, ['debug:deploy', 'warning:deploy', ...Array(5).fill('info:deploy')], 'no level set: everything')

  messages.length = 0
  await client.setLoggingLevel('warning')
  await client.callTool({ name: 'deploy', arguments: { service: 'checkout', environment: 'production', version: '3.0.0' } })
  await client.callTool({ name: 'deploy', arguments: { service: 'search', environment: 'production', version: '1.0.0' } })
  t.same(messages, ['warning:deploy', 'error:deploy'], 'warning and above only')

  messages.length = 0
  await client.setLoggingLevel('error')
  await client.callTool({ name: 'deploy', arguments: { service: 'notifications', environment: 'staging', version: '4.0.0' } })
  t.same(messages, [], 'the major-version warning is filtered out')
})

t.test('rollback asks through a form and acts on accept', async (t) => {
  const gateway = await start(t)
  const { client, asked } = await confirmingClient(t, gateway, [
    { action: 'accept', content: { reason: 'Error rate up', strategy: 'immediate', page_oncall: true } },
  ])
  const result = await client.callTool({ name: 'rollback', arguments: { service: 'payments', environment: 'production' } })
  t.notOk(result.isError)
  t.equal(text(result), 'Rolled back payments in production from 1.4.1 to 1.4.0 (immediate). The on-call engineer was paged.')
  t.match(asked, [{ message: 'Roll back payments in production from 1.4.1 to 1.4.0?' }])
  t.same(asked[0] !== undefined && 'requestedSchema' in asked[0] ? asked[0].requestedSchema : undefined, {
    type: 'object',
    properties: {
      reason: { type: 'string', title: 'Reason', description: 'Recorded in the service history', default: 'Rolled back from MCP' },
      strategy: {
        type: 'string',
        title: 'Strategy',
        oneOf: [
          { const: 'gradual', title: 'Gradually, one instance at a time' },
          { const: 'immediate', title: 'Immediately, all instances at once' },
        ],
        default: 'gradual',
      },
      page_oncall: { type: 'boolean', title: 'Page the on-call engineer', default: false },
    },
    required: ['reason', 'strategy'],
  })
  t.same((await readJson(client, STATUS)).production.payments, { version: '1.4.0', state: 'live' })
  const history = (await readJson(client, 'example://services/payments/history')).history
  t.match(history.at(-1), { environment: 'production', version: '1.4.0', outcome: 'rolled back', note: 'Error rate up (immediate)' })

  const again = await client.callTool({ name: 'rollback', arguments: { service: 'payments', environment: 'production' } })
  t.equal(again.isError, true, 'one level of undo')
  t.match(text(again), /no earlier version/)
  t.equal(asked.length, 1, 'not asked when there is nothing to do')
})

t.test('rollback changes nothing on decline or cancel', async (t) => {
  const gateway = await start(t)
  const { client, asked } = await confirmingClient(t, gateway, [{ action: 'decline' }, { action: 'cancel' }])
  const args = { name: 'rollback', arguments: { service: 'checkout', environment: 'production' } }
  const declined = await client.callTool(args)
  t.notOk(declined.isError)
  t.equal(text(declined), 'Rollback declined; checkout stays at 2.3.0 in production.')
  const cancelled = await client.callTool(args)
  t.notOk(cancelled.isError)
  t.equal(text(cancelled), 'Rollback dismissed without an answer; checkout stays at 2.3.0 in production.')
  t.equal(asked.length, 2)
  t.same((await readJson(client, STATUS)).production.checkout, { version: '2.3.0', previous: '2.2.5', state: 'live' })
})

t.test('rollback without the elicitation capability is refused with an explanation', async (t) => {
  const client = await connect(t, (await start(t)).example)
  const result = await client.callTool({ name: 'rollback', arguments: { service: 'payments', environment: 'production' } })
  t.equal(result.isError, true)
  t.match(text(result), /needs the user's confirmation and could not get it \(The client did not declare the elicitation\.form capability\)\. Nothing was rolled back/)
  t.same((await readJson(client, STATUS)).production.payments, { version: '1.4.1', previous: '1.4.0', state: 'live' })
})

t.test('rollback does nothing when the service changed while the user was deciding', async (t) => {
  const gateway = await start(t)
  const other = await connect(t, gateway.example)
  const client = await connect(t, gateway.example, { elicitation: { form: {} } }, (c) =>
    c.setRequestHandler(ElicitRequestSchema, async () => {
      await other.callTool({ name: 'deploy', arguments: { service: 'payments', environment: 'production', version: '1.4.2' } })
      return { action: 'accept', content: { reason: 'too late', strategy: 'gradual' } }
    }))
  const result = await client.callTool({ name: 'rollback', arguments: { service: 'payments', environment: 'production' } })
  t.equal(result.isError, true)
  t.equal(text(result), 'payments in production changed while you were deciding; nothing was rolled back.')
  t.equal((await readJson(client, STATUS)).production.payments.version, '1.4.2')
})

t.test('a subscriber hears when a tool changes the status resource', async (t) => {
  const gateway = await start(t)
  const updates: string[] = []
  const watcher = await connect(t, gateway.example, {}, (c) =>
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri) }))
  await streamOpen(gateway, watcher)
  await watcher.subscribeResource({ uri: STATUS })

  const { client: operator } = await confirmingClient(t, gateway, [{ action: 'accept', content: { reason: 'bad release', strategy: 'gradual' } }])
  await operator.callTool({ name: 'rollback', arguments: { service: 'checkout', environment: 'production' } })
  await eventually(() => updates.length === 1)
  t.same(updates, [STATUS])
  t.equal((await readJson(watcher, STATUS)).production.checkout.version, '2.2.5', 'the new state is there to read')

  await operator.callTool({ name: 'deploy', arguments: { service: 'search', environment: 'staging', version: '0.9.2' } })
  await eventually(() => updates.length === 3)
  t.same(updates, [STATUS, STATUS, STATUS], 'a deploy changes it twice: deploying, then live')

  await watcher.unsubscribeResource({ uri: STATUS })
  await operator.callTool({ name: 'deploy', arguments: { service: 'search', environment: 'staging', version: '0.9.3' } })
  await sleep(100)
  t.equal(updates.length, 3, 'nothing after unsubscribe')
})

t.test('the history template reads and completes', async (t) => {
  const client = await connect(t, (await start(t)).example)
  t.match(await readJson(client, 'example://services/search/history'), {
    service: 'search',
    history: [{ environment: 'staging', version: '0.9.1', outcome: 'deployed' }, { environment: 'production', version: '0.9.1' }],
  })
  await t.rejects(client.readResource({ uri: 'example://services/billing/history' }), { code: -32002 })
  const complete = async (value: string) => (await client.complete({
    ref: { type: 'ref/resource', uri: 'example://services/{service}/history' },
    argument: { name: 'service', value },
  })).completion.values
  t.same(await complete('p'), ['payments'])
  t.same(await complete(''), ['payments', 'checkout', 'search', 'notifications'])
  t.same(await complete('x'), [])
})

t.test('the release_notes prompt completes its arguments and embeds the history', async (t) => {
  const client = await connect(t, (await start(t)).example)
  const complete = async (name: string, value: string, context?: Record<string, string>) => (await client.complete({
    ref: { type: 'ref/prompt', name: 'release_notes' },
    argument: { name, value },
    ...(context === undefined ? {} : { context: { arguments: context } }),
  })).completion.values
  t.same(await complete('service', 'ch'), ['checkout'])
  t.same(await complete('version', '', { service: 'payments' }), ['1.4.2', '1.4.1', '1.4.0'], 'newest first')
  t.same(await complete('version', '2.2', { service: 'checkout' }), ['2.2.5'])
  t.same(await complete('version', ''), [], 'no service chosen yet')

  const { messages } = await client.getPrompt({ name: 'release_notes', arguments: { service: 'payments', version: '1.4.2' } })
  t.match(messages, [
    { role: 'user', content: { type: 'resource', resource: { uri: 'example://services/payments/history', mimeType: 'application/json', text: /1\.4\.2/ } } },
    { role: 'user', content: { type: 'text', text: /release notes for payments, version 1\.4\.2/ } },
  ])
  await t.rejects(client.getPrompt({ name: 'release_notes', arguments: { service: 'billing' } }), { code: -32602 })
})
