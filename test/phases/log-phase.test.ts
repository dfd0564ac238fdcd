/**
 * The log phase with the official SDK client: a route's log module sees each of its calls after the
 * answer (from the call events, so the dashboard and it read the same calls), never another route's,
 * never an argument; a module that throws is logged, and the route serves on.
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import type { CallEvent } from '../../gateway/events/call-events.ts'
import { gatewayWith } from '../client/harness.ts'
import { eventually } from '../fixtures/waiting.ts'

t.setTimeout(60_000)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HANDLER = join(ROOT, 'test/fixtures/phases/handler.ts')
const LOG = join(ROOT, 'test/fixtures/phases/log.ts')

t.test('a log module sees its route\'s calls after the answers, and its failure is only logged', async (t) => {
  const gateway = await gatewayWith(t, [
    { location: '/logged', server: { name: 'logged', version: '1.0.0' }, handler: HANDLER, phases: { log: LOG } },
    { location: '/quiet', server: { name: 'quiet', version: '1.0.0' }, handler: HANDLER },
  ])
  const clients: Client[] = []
  for (const location of ['/logged', '/quiet']) {
    const client = new Client({ name: 'log-test', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}${location}`))
    await client.connect(transport)
    t.teardown(async () => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
    })
    clients.push(client)
  }
  const [logged, quiet] = clients as [Client, Client]
  await logged.callTool({ name: 'say', arguments: { text: 'secret-argument-value' } })
  await logged.callTool({ name: 'crash', arguments: {} })
  await logged.callTool({ name: 'say', arguments: { text: 'after the module threw' } })
  await quiet.callTool({ name: 'say', arguments: { text: 'elsewhere' } })
  const seen = (globalThis as { phaseLogSeen?: CallEvent[] }).phaseLogSeen ?? []
  await eventually(() => seen.filter((event) => event.method === 'tools/call').length >= 3, 10_000)
  const calls = seen.filter((event) => event.method === 'tools/call')
  t.same(calls.map((event) => [event.route, event.component, event.outcome]), [['/logged', 'say', 'ok'], ['/logged', 'crash', 'error'], ['/logged', 'say', 'ok']], 'one event per call of its own route, the one after the throw too')
  t.ok(seen.every((event) => event.route === '/logged'), 'never another route\'s calls')
  t.notMatch(JSON.stringify(seen), /secret-argument-value/, 'no argument value')
  t.ok(calls.every((event) => typeof event.durationMs === 'number' && event.session.length > 0), 'duration and the session hash')
})
