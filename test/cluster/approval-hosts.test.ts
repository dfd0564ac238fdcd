/**
 * Approval across two hosts: two gateway processes on one Redis behind a balancer without sticky
 * sessions. On 2026-07-28 the v2 client's retry (the answer and the signed approval) lands on the
 * other host, which verifies it and runs the call; an approval used on one host is refused on the
 * other. On a 2025-11-25 session the 1.x client's answer to the ask reaches the host waiting for it
 * over the bus. On a handler route and on a proxy route (each host with its own upstream child): the
 * journals say what ran, and nothing unapproved did.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startRedis } from '../store/redis-server.ts'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { roundRobin, type Forwarded } from './round-robin.ts'

t.setTimeout(180_000)
const tools = fileURLToPath(new URL('../phases/fixtures/approval-tools.ts', import.meta.url))
const upstream = fileURLToPath(new URL('../phases/fixtures/destructive-upstream.mjs', import.meta.url))
const text = (result: unknown): string => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n')
type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }

const folder = mkdtempSync(path.join(tmpdir(), 'approval-hosts-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const handlerJournal = path.join(folder, 'handler')
const upstreamJournal = path.join(folder, 'upstream')
writeFileSync(handlerJournal, '')
writeFileSync(upstreamJournal, '')
const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter((line) => line !== '')

const redis = await startRedis(t)
const config = {
  store: { type: 'redis', url: redis.url, key_prefix: 'approval:' },
  request_state: { key: 'approval-hosts-share-this-key-0123' },
  routes: [
    { location: '/files', handler: tools, server: { name: 'files', version: '1.0.0' }, options: { journal: handlerJournal }, approval: { destructive: true } },
    {
      location: '/proxy',
      server: { name: 'proxy', version: '1.0.0' },
      upstreams: [{ name: 'fs', command: ['node', upstream], env: { FIXTURE_JOURNAL: upstreamJournal }, timeout: 20 }],
      prefix: 'never',
      approval: { tools: ['delete_*'] },
    },
  ],
}
const [a, b] = (await Promise.all([startGatewayProcess(t, config), startGatewayProcess(t, config)])) as [GatewayProcess, GatewayProcess]
const balancer = await roundRobin(t, [a.url, b.url])
const calls = (name: string, path: string): Forwarded[] => balancer.log.filter((entry) => {
  const params = (entry.body?.params ?? {}) as { name?: string; arguments?: { path?: string } }
  return entry.body?.method === 'tools/call' && params.name === name && params.arguments?.path === path
})

t.test('2026-07-28: the retry carrying the approval lands on the other host and runs there, once', async (t) => {
  let next: Answer = { action: 'accept', content: { approve: true } }
  for (const route of ['/files', '/proxy']) {
    const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } })
    client.setRequestHandler('elicitation/create', async () => next as never)
    await client.connect(new TransportV2(new URL(`${balancer.url}${route}`)))
    t.teardown(() => client.close())
    t.equal(client.getProtocolEra(), 'modern')
    const journal = route === '/files' ? handlerJournal : upstreamJournal
    const upstreamText = route === '/files' ? 'deleted' : 'upstream deleted'

    next = { action: 'accept', content: { approve: true } }
    t.equal(text(await client.callTool({ name: 'delete_file', arguments: { path: `${route}/one` } })), `${upstreamText} ${route}/one`, `${route}: approved, then run`)
    const rounds = calls('delete_file', `${route}/one`)
    t.equal(rounds.length, 2, 'the call and its retry')
    t.not(rounds[0]!.target, rounds[1]!.target, 'the retry with the approval reached the other host')
    next = { action: 'decline' }
    await t.rejects(client.callTool({ name: 'delete_file', arguments: { path: `${route}/two` } }), /declined/, 'declined on the other host')
    t.same(lines(journal).filter((line) => line.includes(`${route}/`)), [`delete_file ${route}/one`], 'only the approved call ran, once')
  }
})

t.test('2026-07-28: asked on one host, approved on the other, refused when replayed on the first', async (t) => {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }
  const call = { name: 'delete_file', arguments: { path: '/proxy/raw' } }
  const post = async (base: string, id: number, extra: object = {}) => {
    const response = await fetch(`${base}/proxy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': call.name },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { _meta: meta, ...call, ...extra } }),
    })
    const body = await response.text()
    return JSON.parse(body.startsWith('{') ? body : body.split('\n').filter((line) => line.startsWith('data: {')).at(-1)!.slice(6)) as { result?: Record<string, any>; error?: { message: string; data?: { code?: string; approval?: string } } }
  }
  const approve = { 'mcp-edge/approval': { action: 'accept', content: { approve: true } } }
  const asked = (await post(a.url, 1)).result!
  t.equal(asked.resultType, 'input_required', 'host a asks')
  const done = await post(b.url, 2, { inputResponses: approve, requestState: asked.requestState })
  t.equal(text(done.result), 'upstream deleted /proxy/raw', 'host b verifies the approval host a signed and runs the call')
  const replayed = await post(a.url, 3, { inputResponses: approve, requestState: asked.requestState })
  t.equal(replayed.error?.data?.code, 'MCP_EDGE_APPROVAL_INVALID', 'the approval used on b is refused on a (the store remembers it)')
  t.same(lines(upstreamJournal).filter((line) => line.endsWith('/proxy/raw')), ['delete_file /proxy/raw'], 'the upstream ran it once')
  const id = replayed.error?.data?.approval
  const refusedLine = await a.logged((line) => line.approval === id && line.msg === 'approval: the call was refused', 10_000)
  t.match(refusedLine, { route: '/proxy', tool: 'delete_file', code: 'MCP_EDGE_APPROVAL_INVALID' }, 'host a logged the refusal under the approval id')
  await b.logged((line) => line.approval === id && line.msg === 'approval: approved by the user', 10_000)
  t.pass('host b logged the approval under the same id')
  t.notOk([...a.logs, ...b.logs].some((line) => JSON.stringify(line).includes(String(String(asked.requestState).split('.')[1]))), 'no log line holds the signature of a requestState')
})

t.test('2025-11-25 session over both hosts: the answer to the ask reaches the host that waits for it', async (t) => {
  let next: Answer = { action: 'accept', content: { approve: true } }
  const asked: string[] = []
  const client = new Client({ name: 'v1', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message)
    return next as never
  })
  const transport = new StreamableHTTPClientTransport(new URL(`${balancer.url}/files`))
  await client.connect(transport)
  t.teardown(async () => {
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  })
  const before = balancer.log.length
  t.equal(text(await client.callTool({ name: 'delete_file', arguments: { path: '/files/session' } })), 'deleted /files/session')
  const answer = balancer.log.slice(before).find((entry) => entry.body !== undefined && 'result' in entry.body && entry.body.id !== undefined)
  const request = balancer.log.slice(before).find((entry) => entry.body?.method === 'tools/call')
  t.ok(answer !== undefined && request !== undefined && answer.target !== request.target, 'the answer went to the other host')
  next = { action: 'cancel' }
  await t.rejects(client.callTool({ name: 'delete_file', arguments: { path: '/files/cancelled' } }), /dismissed/)
  t.equal(asked.length, 2)
  t.same(lines(handlerJournal).filter((line) => line.includes('/files/session') || line.includes('/files/cancelled')), ['delete_file /files/session'])
})
