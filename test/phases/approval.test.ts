/**
 * Approval for destructive tools (route `approval:`), driven by the official SDK clients on one
 * gateway: the 1.x client on a 2025-11-25 session (form elicitation on the call's stream) and the v2
 * client on 2026-07-28 (an input_required round, its answer and the signed approval in the retry),
 * each answering accept, decline and cancel; on a handler route (what ran is the handler's own word)
 * and on a proxy route in front of a real SDK server in a child process (what reached the upstream is
 * that process's journal). Then what a client could forge on 2026-07-28: a tampered requestState, an
 * expired approval, an answer nobody asked for, a replayed approval; and a client without elicitation.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { paramsDigest, RequestStateCodec } from '../../gateway/protocol/stateless/request-state.ts'
import { EdgeCode, RpcCode } from '../../gateway/wire/errors.ts'
import { McpClient, WebSocketTransport } from '../../gateway/client/index.ts'
import { toolMethods } from '../../gateway/protocol/methods/tools.ts'
import { connect, gatewayWith } from '../e2e/harness.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'

t.setTimeout(90_000)
const tools = fileURLToPath(new URL('./fixtures/approval-tools.ts', import.meta.url))
const upstream = fileURLToPath(new URL('./fixtures/destructive-upstream.mjs', import.meta.url))
const KEY = 'approval-test-request-state-key-0123'
const text = (result: unknown): string => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n')
const PROTOCOL = '2026-07-28'

type Tap = Test
type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }

const folder = mkdtempSync(path.join(tmpdir(), 'approval-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const journal = path.join(folder, 'upstream-journal')
writeFileSync(journal, '')
const ALICE_KEY = 'approval-alice-key-0123456789abcdef'
const BOB_KEY = 'approval-bob-key-0123456789abcdef'
const keysFile = path.join(folder, 'keys.yaml')
const sha = (key: string): string => createHash('sha256').update(key).digest('hex')
writeFileSync(keysFile, `keys:\n  - sha256: ${sha(ALICE_KEY)}\n    principal: alice\n  - sha256: ${sha(BOB_KEY)}\n    principal: bob\n`)
const upstreamCalls = (): string[] => readFileSync(journal, 'utf8').split('\n').filter((line) => line !== '')

// server-everything lists no tool with destructiveHint: true, so its route names one by a glob.
const everything = everythingOverHttp(t).then(({ port }) => roundRobin(t, [`http://127.0.0.1:${port}`]))
const gatewayReady = everything.then((recorder) => gatewayWith(t, [
  {
    location: '/everything',
    server: { name: 'everything-proxy', version: '1.0.0' },
    upstreams: [{ name: 'everything', url: `${recorder.url}/mcp`, timeout: 20 }],
    prefix: 'never',
    approval: { tools: ['get-s*'] },
  },
  { location: '/files', handler: tools, server: { name: 'files', version: '1.0.0' }, transports: ['streamable_http', 'websocket'], approval: { tools: ['drop_*'], destructive: true, ttl_s: 60 } },
  { location: '/quick', handler: tools, server: { name: 'quick', version: '1.0.0' }, approval: { tools: ['delete_file'], ttl_s: 0.3 } },
  { location: '/team', handler: tools, server: { name: 'team', version: '1.0.0' }, auth: { api_keys: keysFile }, scopes: { tools: { purge: ['ops.purge'] } }, approval: { destructive: true } },
  { location: '/plain', handler: tools, server: { name: 'plain', version: '1.0.0' } },
  { location: '/lenient', handler: tools, server: { name: 'lenient', version: '1.0.0' }, approval: { destructive: true, fallback: 'allow' } },
  {
    location: '/proxy',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'fs', command: ['node', upstream], env: { FIXTURE_JOURNAL: journal }, timeout: 20 }],
    prefix: 'never',
    approval: { destructive: true },
  },
], { request_state: { key: KEY } }))

/** What each call was decided by, as its call record says (events/call-record.ts), by route. */
const decisions: Array<{ route: string; component: string | undefined; decision: string | undefined; approval: string | undefined; error: string | undefined }> = []

t.before(async () => {
  const gateway = await gatewayReady
  for (const [route, endpoint] of gateway.endpoints) {
    const calls = endpoint.calls!
    const finish = calls.finish.bind(calls)
    calls.finish = (method, name, seconds, error, message, who) => {
      if (method === 'tools/call') {
        const record = who as { decision?: string; approval?: string }
        decisions.push({ route, component: name, decision: record.decision, approval: record.approval, error })
      }
      finish(method, name, seconds, error, message, who)
    }
  }
})

/** A 1.x client on a session whose user answers with `answer()`; the asks it got are kept. */
async function sessionClient(t: Tap, url: string, answer: () => Answer | Promise<Answer>, elicitation = true) {
  const asked: string[] = []
  const client = await connect(t, url, elicitation ? { elicitation: {} } : {}, (c) => {
    if (!elicitation) return
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message)
      return (await answer()) as never
    })
  })
  return { client, asked }
}

/** A v2 client speaking 2026-07-28 whose user answers with `answer(message)`. */
async function modernClient(t: Tap, url: string, answer: (message: string) => Answer, elicitation = true) {
  const asked: string[] = []
  const client = new ClientV2({ name: 'v2-approver', version: '2.0.0' }, { capabilities: elicitation ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: 'auto' } })
  if (elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const message = String((request.params as { message: string }).message)
      asked.push(message)
      return answer(message) as never
    })
  }
  await client.connect(new TransportV2(new URL(url)))
  t.teardown(() => client.close())
  t.equal(client.getProtocolEra(), 'modern', 'the v2 client speaks 2026-07-28')
  return { client, asked }
}

async function handlerRuns(url: string): Promise<string[]> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
  const client = new Client({ name: 'runs', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  const runs = JSON.parse(text(await client.callTool({ name: 'runs', arguments: {} }))) as string[]
  await transport.terminateSession().catch(() => undefined)
  await client.close()
  return runs
}

/** The JSON-RPC error a call was refused with (the SDK clients throw it). */
async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  try {
    await call
  } catch (error) {
    return error as { code: number; message: string; data?: Record<string, unknown> }
  }
  throw new Error('the call was not refused')
}

t.test('2025-11-25 session, handler route: the user is asked, and only an approval runs the tool', async (t) => {
  const gateway = await gatewayReady
  const url = `${gateway.url}/files`
  let next: Answer = { action: 'accept', content: { approve: true } }
  const { client, asked } = await sessionClient(t, url, () => next)

  t.equal(text(await client.callTool({ name: 'read_file', arguments: { path: '/etc/hosts' } })), 'contents of /etc/hosts', 'a read-only tool runs unasked')
  t.equal(asked.length, 0)

  t.equal(text(await client.callTool({ name: 'delete_file', arguments: { path: '/srv/a.txt' } })), 'deleted /srv/a.txt', 'approved: it runs')
  t.equal(asked.length, 1, 'asked once')
  t.match(asked[0], /Tool: delete_file \(route \/files\)/, 'the ask names the tool and the route')
  t.match(asked[0], /Asked by: an unauthenticated caller through the client "e2e"/, 'who asks')
  t.match(asked[0], /Arguments: \{"path":"\/srv\/a.txt"\}/, 'and the arguments')
  t.match(asked[0], /Approval id: [A-Za-z0-9_-]{16}/)

  next = { action: 'decline' }
  const declined = await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/srv/b.txt' } }))
  t.equal(declined.code, EdgeCode.MCP_EDGE_APPROVAL_DECLINED.rpc)
  t.match(declined.message, /declined this call; it did not run/)
  t.equal(declined.data?.code, 'MCP_EDGE_APPROVAL_DECLINED', 'the error table row is named in the data')
  t.equal(declined.data?.tool, 'delete_file')

  next = { action: 'cancel' }
  const cancelled = await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/srv/c.txt' } }))
  t.equal(cancelled.data?.code, 'MCP_EDGE_APPROVAL_CANCELLED')
  t.match(cancelled.message, /dismissed the approval request/)

  next = { action: 'accept', content: { approve: false } }
  t.equal((await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/srv/d.txt' } }))).data?.code, 'MCP_EDGE_APPROVAL_DECLINED', 'accepted with the box unticked is a decline')

  // The session's analogue of a tampered answer: one that does not fit the form.
  next = { action: 'accept', content: { approve: 'yes please' } }
  const malformed = await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/srv/e.txt' } }))
  t.equal(malformed.data?.code, 'MCP_EDGE_APPROVAL_CANCELLED', 'an answer that does not fit the form refuses the call')

  next = { action: 'accept', content: { approve: true } }
  t.equal(text(await client.callTool({ name: 'drop_table', arguments: { name: 'users' } })), 'dropped users', 'a tool named by a glob (drop_*), without a hint, is asked too')
  t.equal(asked.length, 6)

  const big = 'x'.repeat(5000)
  next = { action: 'decline' }
  await refusal(client.callTool({ name: 'delete_file', arguments: { path: big } }))
  t.ok(asked[6]!.length < 2600, `the arguments shown are bounded (${asked[6]!.length} characters)`)
  t.match(asked[6], /more characters not shown/)

  t.same(await handlerRuns(url), ['read_file /etc/hosts', 'delete_file /srv/a.txt', 'drop_table users'], 'only the approved calls (and the read) ran')
  const approvals = decisions.filter((d) => d.route === '/files' && d.decision === 'approval')
  t.equal(approvals.length, 7, 'each asked call records the approval as its deciding rule')
  t.ok(approvals.every((d) => typeof d.approval === 'string' && d.approval.length > 0), 'with an approval id')
  t.equal(new Set(approvals.map((d) => d.approval)).size, 7, 'one id per approval')
  t.notOk(decisions.some((d) => d.component === 'read_file' && d.decision !== undefined), 'a call without approval names no decision')
})

t.test('2025-11-25 session: no answer within ttl_s is an expired approval; a client without elicitation is refused or, by fallback, allowed', async (t) => {
  const gateway = await gatewayReady
  const { client } = await sessionClient(t, `${gateway.url}/quick`, () => new Promise<Answer>((resolve) => setTimeout(() => resolve({ action: 'accept', content: { approve: true } }), 1500)))
  const expired = await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/srv/late.txt' } }))
  t.equal(expired.data?.code, 'MCP_EDGE_APPROVAL_EXPIRED', 'the user answered after ttl_s (0.3 s)')
  t.equal(expired.code, EdgeCode.MCP_EDGE_APPROVAL_EXPIRED.rpc)
  t.same(await handlerRuns(`${gateway.url}/quick`), [], 'it never ran')

  const { client: mute } = await sessionClient(t, `${gateway.url}/files`, () => ({ action: 'accept' }), false)
  const unavailable = await refusal(mute.callTool({ name: 'delete_file', arguments: { path: '/srv/x' } }))
  t.equal(unavailable.code, RpcCode.MissingCapability)
  t.equal(unavailable.data?.code, 'MCP_EDGE_APPROVAL_UNAVAILABLE')
  t.match(unavailable.message, /cannot ask its user/)
  t.same(unavailable.data?.requiredCapabilities, { elicitation: { form: {} } })

  const { client: lenient } = await sessionClient(t, `${gateway.url}/lenient`, () => ({ action: 'accept' }), false)
  t.equal(text(await lenient.callTool({ name: 'delete_file', arguments: { path: '/srv/y' } })), 'deleted /srv/y', 'fallback: allow runs it unasked')
  const allowed = decisions.find((d) => d.route === '/lenient' && d.component === 'delete_file')
  t.equal(allowed?.decision, 'approval', 'and its record names the approval gate')
  t.match(allowed?.approval, /^fallback-/, 'with a fallback approval id')
})

t.test('a session over WebSocket (the project\'s own client) is asked the same way', async (t) => {
  const gateway = await gatewayReady
  const client = new McpClient(new WebSocketTransport({ url: `${gateway.url.replace('http:', 'ws:')}/files` }), { clientInfo: { name: 'ws-client', version: '1.0.0' } })
  t.teardown(() => client.close())
  let approve = true
  const asked: string[] = []
  await client.initialize({ elicitation: (request) => {
    asked.push(request.message)
    return { approve }
  } })
  t.equal(text(await client.callTool('delete_file', { path: '/ws/1' })), 'deleted /ws/1', 'approved over the socket')
  approve = false
  const declined = await refusal(client.callTool('delete_file', { path: '/ws/2' }))
  t.equal(declined.data?.code, 'MCP_EDGE_APPROVAL_DECLINED')
  t.equal(asked.length, 2)
  t.match(asked[0], /Tool: delete_file \(route \/files\)[\s\S]*"ws-client"/)
  const runs = await handlerRuns(`${gateway.url}/files`)
  t.ok(runs.includes('delete_file /ws/1') && !runs.includes('delete_file /ws/2'), 'only the approved call ran')
})

t.test('2025-11-25 session, proxy route: the upstream never sees an unapproved call', async (t) => {
  const gateway = await gatewayReady
  let next: Answer = { action: 'decline' }
  const { client, asked } = await sessionClient(t, `${gateway.url}/proxy`, () => next)
  const before = upstreamCalls().length
  t.equal(text(await client.callTool({ name: 'read_file', arguments: { path: '/a' } })), 'upstream contents of /a', 'the upstream lists read_file as read-only: unasked')
  t.equal(asked.length, 0)
  t.equal((await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/a' } }))).data?.code, 'MCP_EDGE_APPROVAL_DECLINED', "asked by the upstream's destructiveHint, and declined")
  next = { action: 'cancel' }
  t.equal((await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/b' } }))).data?.code, 'MCP_EDGE_APPROVAL_CANCELLED')
  next = { action: 'accept', content: { approve: true } }
  t.equal(text(await client.callTool({ name: 'delete_file', arguments: { path: '/c' } })), 'upstream deleted /c')
  t.equal(asked.length, 3)
  t.same(upstreamCalls().slice(before), ['read_file /a', 'delete_file /c'], 'the upstream received the read and the approved call only')
})

t.test('in front of server-everything: a tool named by a glob is asked, and only the approved call reaches it', async (t) => {
  const gateway = await gatewayReady
  const recorder = await everything
  const sums = () => recorder.log.filter((entry) => entry.body?.method === 'tools/call' && (entry.body.params as { name?: string }).name === 'get-sum').length
  let next: Answer = { action: 'decline' }
  const { client, asked } = await sessionClient(t, `${gateway.url}/everything`, () => next)
  t.match(text(await client.callTool({ name: 'echo', arguments: { message: 'hi' } })), /hi/, 'echo is not named: unasked')
  t.equal((await refusal(client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }))).data?.code, 'MCP_EDGE_APPROVAL_DECLINED')
  t.equal(sums(), 0, 'the declined call never reached server-everything')
  next = { action: 'accept', content: { approve: true } }
  t.match(text(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })), /5/, 'approved: its answer')
  t.equal(sums(), 1, 'one call reached it')
  t.equal(asked.length, 2)
  t.match(asked[0], /Tool: get-sum \(route \/everything\)[\s\S]*Arguments: \{"a":2,"b":3\}/)
})

t.test('a route without approval: has no gate, its tools/call is the plain method', async (t) => {
  const gateway = await gatewayReady
  t.equal(gateway.endpoints.get('/plain')!.method('tools/call'), toolMethods['tools/call'], 'no wrapper: nothing to pay on any path')
  t.not(gateway.endpoints.get('/files')!.method('tools/call'), toolMethods['tools/call'], 'a route with approval: has its gate')
  const { client, asked } = await sessionClient(t, `${gateway.url}/plain`, () => ({ action: 'decline' }))
  t.equal(text(await client.callTool({ name: 'delete_file', arguments: { path: '/plain' } })), 'deleted /plain', 'a destructive tool runs unasked there')
  t.equal(asked.length, 0)
  t.notOk(decisions.some((d) => d.route === '/plain' && d.decision !== undefined), 'and its record names no decision')
})

t.test('2026-07-28, the v2 client: input_required rounds, on the handler route and the proxy route', async (t) => {
  const gateway = await gatewayReady
  let next: Answer = { action: 'accept', content: { approve: true } }
  const { client, asked } = await modernClient(t, `${gateway.url}/files`, (message) => (message.startsWith('Keep a backup?') ? { action: 'accept', content: { backup: true } } : next))
  t.equal(text(await client.callTool({ name: 'delete_file', arguments: { path: '/m/1' } })), 'deleted /m/1', 'approved in an input_required round, then run')
  t.match(asked[0], /Tool: delete_file \(route \/files\)[\s\S]*through the client "v2-approver"[\s\S]*"path":"\/m\/1"/)
  next = { action: 'decline' }
  t.equal((await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/m/2' } }))).data?.code, 'MCP_EDGE_APPROVAL_DECLINED')
  next = { action: 'cancel' }
  t.equal((await refusal(client.callTool({ name: 'delete_file', arguments: { path: '/m/3' } }))).data?.code, 'MCP_EDGE_APPROVAL_CANCELLED')
  next = { action: 'accept', content: { approve: true } }
  t.equal(text(await client.callTool({ name: 'purge', arguments: {} })), 'purged (backup: true)', "the approval holds through the tool's own question (a third round)")
  t.equal(asked.length, 5)
  t.match(asked[4], /^Keep a backup\?/, "the tool's question came after the approval")
  t.same((await handlerRuns(`${gateway.url}/files`)).filter((run) => run.startsWith('delete_file /m/') || run.startsWith('purge')), ['delete_file /m/1', 'purge backup=true'])

  const proxied = await modernClient(t, `${gateway.url}/proxy`, () => next)
  const before = upstreamCalls().length
  next = { action: 'decline' }
  t.equal((await refusal(proxied.client.callTool({ name: 'delete_file', arguments: { path: '/m/p1' } }))).data?.code, 'MCP_EDGE_APPROVAL_DECLINED')
  next = { action: 'accept', content: { approve: true } }
  t.equal(text(await proxied.client.callTool({ name: 'delete_file', arguments: { path: '/m/p2' } })), 'upstream deleted /m/p2')
  t.same(upstreamCalls().slice(before), ['delete_file /m/p2'], 'the upstream received the approved call only, once')

  // The official client, with its requests altered on the way: the requestState of its retry.
  const tamperer = new ClientV2({ name: 'v2-tamperer', version: '2.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } })
  tamperer.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { approve: true } }) as never)
  const alter: typeof fetch = async (input, init) => {
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined
    const state = body?.params?.requestState
    if (typeof state !== 'string') return fetch(input, init)
    const [payload, mac] = state.split('.')
    const approval = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'))
    approval.e += 3_600_000
    body.params.requestState = `${Buffer.from(JSON.stringify(approval)).toString('base64url')}.${mac}`
    return fetch(input, { ...init, body: JSON.stringify(body) })
  }
  await tamperer.connect(new TransportV2(new URL(`${gateway.url}/proxy`), { fetch: alter }))
  t.teardown(() => tamperer.close())
  const tampered = await refusal(tamperer.callTool({ name: 'delete_file', arguments: { path: '/m/tampered' } }))
  t.equal(tampered.code, RpcCode.InvalidParams, 'a requestState altered on the way (its expiry pushed back) is refused')
  t.match(tampered.message, /integrity check/)

  // The official client whose user answers after ttl_s (0.3 s on /quick).
  const slow = new ClientV2({ name: 'v2-slow', version: '2.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } })
  slow.setRequestHandler('elicitation/create', async () => {
    await new Promise((resolve) => setTimeout(resolve, 800))
    return { action: 'accept', content: { approve: true } } as never
  })
  await slow.connect(new TransportV2(new URL(`${gateway.url}/quick`)))
  t.teardown(() => slow.close())
  const late = await refusal(slow.callTool({ name: 'delete_file', arguments: { path: '/m/late' } }))
  t.equal(late.data?.code, 'MCP_EDGE_APPROVAL_EXPIRED', 'an answer after ttl_s: the approval expired')
  t.notOk((await handlerRuns(`${gateway.url}/quick`)).includes('delete_file /m/late'), 'and the call never ran')
  t.equal(upstreamCalls().length, before + 1, 'the tampered call never reached the upstream')

  const mute = await modernClient(t, `${gateway.url}/proxy`, () => next, false)
  const unavailable = await refusal(mute.client.callTool({ name: 'delete_file', arguments: { path: '/m/p3' } }))
  t.equal(unavailable.code, RpcCode.MissingCapability, 'a client without elicitation: -32021, the capability it needs in the data')
  t.equal(upstreamCalls().length, before + 1, 'nothing more reached the upstream')
})

/** One raw 2026-07-28 tools/call POST; resolves with the JSON-RPC answer. */
async function post(url: string, id: number, params: Record<string, unknown>, capabilities: object = { elicitation: {} }, headers: Record<string, string> = {}) {
  const meta = { 'io.modelcontextprotocol/protocolVersion': PROTOCOL, 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } }
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL, 'mcp-method': 'tools/call', 'mcp-name': String(params.name), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { _meta: meta, ...params } }),
  })
  const body = await response.text()
  const json = JSON.parse(body.startsWith('{') ? body : body.split('\n').filter((line) => line.startsWith('data: {')).at(-1)!.slice(6))
  return json as { result?: Record<string, any>; error?: { code: number; message: string; data?: Record<string, unknown> } }
}

t.test('2026-07-28, what a client could forge: tampered, expired, unasked, replayed, another call', async (t) => {
  const gateway = await gatewayReady
  for (const location of ['/files', '/proxy']) {
    const url = `${gateway.url}${location}`
    const upstreamBefore = upstreamCalls().length
    const call = { name: 'delete_file', arguments: { path: `${location}/forged` } }
    const approve = { 'mcp-edge/approval': { action: 'accept', content: { approve: true } } }

    const asked = (await post(url, 1, call)).result!
    t.equal(asked.resultType, 'input_required', `${location}: the first round asks`)
    t.same(Object.keys(asked.inputRequests), ['mcp-edge/approval'])
    t.equal(asked.inputRequests['mcp-edge/approval'].method, 'elicitation/create')
    t.same(asked.inputRequests['mcp-edge/approval'].params.requestedSchema.required, ['approve'])

    const unasked = (await post(url, 2, { ...call, inputResponses: approve })).result!
    t.equal(unasked.resultType, 'input_required', 'an approving answer without the signed ask is not an approval: it is asked again')

    const [body, mac] = String(asked.requestState).split('.')
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'))
    payload.g.granted = true
    const tampered = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`
    const refusedTamper = await post(url, 3, { ...call, requestState: tampered })
    t.equal(refusedTamper.error?.code, RpcCode.InvalidParams, 'a tampered approval is refused')
    t.match(refusedTamper.error?.message, /integrity check/)

    const otherCall = await post(url, 4, { name: 'delete_file', arguments: { path: '/elsewhere' }, inputResponses: approve, requestState: asked.requestState })
    t.match(otherCall.error?.message, /belongs to another request/, 'the approval is bound to the arguments')

    // Signed with the gateway's own key, but past its expiry: only the gateway could have made it.
    const codec = new RequestStateCodec(KEY, 600)
    const stale = codec.sign('tools/call', paramsDigest(call), undefined, { answers: {}, handlerState: undefined, approval: { id: 'stale-approval', exp: Date.now() - 1000, n: 'stale-nonce', granted: false } })
    const expired = await post(url, 5, { ...call, inputResponses: approve, requestState: stale })
    t.equal(expired.error?.code, EdgeCode.MCP_EDGE_APPROVAL_EXPIRED.rpc, 'an expired approval is refused')
    t.equal(expired.error?.data?.code, 'MCP_EDGE_APPROVAL_EXPIRED')
    t.equal(expired.error?.data?.approval, 'stale-approval')

    const approved = await post(url, 6, { ...call, inputResponses: approve, requestState: asked.requestState })
    t.equal(approved.result?.resultType, 'complete', 'the signed ask and an approving answer run the call')
    const replayed = await post(url, 7, { ...call, inputResponses: approve, requestState: asked.requestState })
    t.equal(replayed.error?.data?.code, 'MCP_EDGE_APPROVAL_INVALID', 'the same approval again is refused: one approval, one call')
    t.match(replayed.error?.message, /used already/)

    const declined = await post(url, 8, { ...call, inputResponses: { 'mcp-edge/approval': { action: 'decline' } }, requestState: (await post(url, 9, call)).result!.requestState })
    t.equal(declined.error?.data?.code, 'MCP_EDGE_APPROVAL_DECLINED')
    if (location === '/proxy') t.same(upstreamCalls().slice(upstreamBefore), ['delete_file /proxy/forged'], 'the upstream received the one approved call')
  }
  t.same((await handlerRuns(`${gateway.url}/files`)).filter((run) => run.includes('forged')), ['delete_file /files/forged'], 'the handler ran the one approved call')
})

t.test('bound to the principal: the ask names who asks, and another principal cannot use the approval', async (t) => {
  const gateway = await gatewayReady
  const url = `${gateway.url}/team`
  const alice = { authorization: `Bearer ${ALICE_KEY}` }
  const bob = { authorization: `Bearer ${BOB_KEY}` }
  const call = { name: 'delete_file', arguments: { path: '/team/report' } }
  const approve = { 'mcp-edge/approval': { action: 'accept', content: { approve: true } } }
  const asked = (await post(url, 1, call, { elicitation: {} }, alice)).result!
  t.match(asked.inputRequests['mcp-edge/approval'].params.message, /Asked by: alice through the client "raw"/, "the ask names alice's principal")
  const stolen = await post(url, 2, { ...call, inputResponses: approve, requestState: asked.requestState }, { elicitation: {} }, bob)
  t.equal(stolen.error?.code, RpcCode.InvalidParams, "bob cannot use alice's approval")
  t.match(stolen.error?.message, /belongs to another request/)
  const done = await post(url, 3, { ...call, inputResponses: approve, requestState: asked.requestState }, { elicitation: {} }, alice)
  t.equal(text(done.result), 'deleted /team/report', 'alice can')

  const unscoped = await post(url, 4, { name: 'purge', arguments: {} }, { elicitation: {} }, alice)
  t.equal(unscoped.result, undefined, 'a caller without the tool\'s scope is not asked')
  t.match(unscoped.error?.message, /scope/i, 'it is refused for the scope')

  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
  const messages: string[] = []
  const client = new Client({ name: 'bobs-client', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    messages.push(request.params.message)
    return { action: 'decline' }
  })
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bob } })
  await client.connect(transport)
  t.teardown(async () => {
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  })
  t.equal((await refusal(client.callTool(call))).data?.code, 'MCP_EDGE_APPROVAL_DECLINED')
  t.match(messages[0], /Asked by: bob through the client "bobs-client"/, "on a session, the ask names bob's principal")
})
