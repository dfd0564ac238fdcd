/**
 * The filter phase with real peers: the official SDK client, the gateway on loopback, and (for the
 * proxy route) `@modelcontextprotocol/server-everything` as an upstream process. Built-ins (secret
 * redaction, the size cap, stack traces withheld) and a filter module (replace, withhold, throw), on
 * a handler route and a proxy route, in a session and stateless; `mcp-edge check` naming a phase
 * module that fails to load.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { connect } from '../e2e/harness.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'
import { checkRoutes, everythingRoute, ROOT, routeYaml, text } from './phase-peers.ts'

t.setTimeout(120_000)
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE'

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-phases-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))

const FILTER = join(ROOT, 'test/fixtures/phases/filter.ts')
const HANDLER = join(ROOT, 'test/fixtures/phases/handler.ts')

/** One stateless (2026-07-28-style) tools/call as raw JSON over HTTP, without a session: the other path. */
async function post(url: string, body: { method: string; params: { name: string; [key: string]: unknown }; [key: string]: unknown }, session?: string): Promise<{ status: number; body: { result?: { content: Array<{ text: string }> }; error?: { code: number; message: string } } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session === undefined ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': body.method, 'mcp-name': body.params.name } : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }) },
    body: JSON.stringify(body),
  })
  const raw = await response.text()
  const json = raw.startsWith('{') ? raw : raw.split('\n').find((line) => line.startsWith('data: '))!.slice(6)
  return { status: response.status, body: JSON.parse(json) }
}

t.test('a proxy route in front of server-everything: an AWS key redacted from a tool result, the module replaces and withholds', async (t) => {
  const { port } = await everythingOverHttp(t, 20_000)
  const gateway = await gatewayWith(t, [everythingRoute(port, {
    phases: { filter: FILTER },
    filter: { redact: true },
  })])
  const client = await connect(t, `${gateway.url}/everything`)
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: `key ${AWS_KEY} here` } })), 'Echo: key [REDACTED] here', 'the upstream\'s AKIA key never leaves')
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'hello' } })), 'Echo: hello', 'a clean result passes as it came')
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'swap-me' } })), 'swapped for undefined on /everything tools/call echo', 'the module replaced the result, knowing the call')
  await t.rejects(client.callTool({ name: 'echo', arguments: { message: 'withhold-me' } }), /Result withheld by the route's filter: the filter module withheld it/)
  const thrown = await client.callTool({ name: 'echo', arguments: { message: 'throw-me' } }).then(() => '', (error: Error) => error.message)
  t.match(thrown, /Result withheld by the route's filter \(ref [\w-]+\)/, 'a throwing module is the phase\'s failure, with a reference')
  t.notMatch(thrown, /db-password/, 'and none of its internal text')
  t.ok((await client.listTools()).tools.some((tool) => tool.name === 'echo'), 'lists pass the module untouched')
  t.match(JSON.stringify((await client.getPrompt({ name: 'simple-prompt' })).messages), /simple prompt/, 'a prompt passes')
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'after' } })), 'Echo: after', 'the route serves on after the module threw')
})

t.test('a handler route: size cap, stack traces withheld, a custom pattern, a session and a stateless call', async (t) => {
  const gateway = await gatewayWith(t, [{
    location: '/own',
    server: { name: 'own', version: '1.0.0' },
    handler: HANDLER,
    phases: { filter: FILTER },
    filter: { max_result_bytes: 1000, redact: ['internal-\\d+'] },
  }])
  const url = `${gateway.url}/own`
  const client = await connect(t, url)
  t.equal(text(await client.callTool({ name: 'say', arguments: { text: `host internal-42 and ${AWS_KEY}` } })), `host [REDACTED] and ${AWS_KEY}`, 'the configured pattern only (no default set unless asked)')
  await t.rejects(client.callTool({ name: 'big', arguments: {} }), /Result withheld by the route's filter: result over 1000 bytes/)
  const crash = await client.callTool({ name: 'crash', arguments: {} })
  t.equal(crash.isError, true, 'still a tool error')
  t.match(text(crash), /^Tool crash failed \(ref [\w-]+\)$/, 'the stack trace is replaced by a reference')
  t.notMatch(JSON.stringify(crash), /tool\.ts|node:internal/, 'no frame leaves')
  t.equal(text(await client.callTool({ name: 'plain-error', arguments: {} })), 'no such row', 'an error without a stack passes')
  t.equal(text(await client.callTool({ name: 'say', arguments: { text: 'swap-me' } })), 'swapped for undefined on /own tools/call say', 'the module on a handler route')

  // Without a session (the stateless path of the endpoint): the same filter.
  const stateless = await post(url, {
    jsonrpc: '2.0', id: 7, method: 'tools/call',
    params: { name: 'say', arguments: { text: 'internal-9' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
  })
  t.equal(stateless.body.result?.content[0]!.text ?? JSON.stringify(stateless.body), '[REDACTED]', 'a stateless call is filtered too')
})

t.test('a route without phases is untouched', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/own', server: { name: 'own', version: '1.0.0' }, handler: HANDLER }])
  const client = await connect(t, `${gateway.url}/own`)
  t.equal(text(await client.callTool({ name: 'say', arguments: { text: `${AWS_KEY} swap-me` } })), `${AWS_KEY} swap-me`)
  t.equal(text(await client.callTool({ name: 'big', arguments: {} })).length, 5000)
})

t.test('mcp-edge check names a phase module that fails to load, with its file', async (t) => {
  const broken = join(tmp, 'broken-filter.ts')
  await writeFile(broken, 'throw new Error("cannot start")\n')
  const notFunction = join(tmp, 'not-function.mjs')
  await writeFile(notFunction, 'export default 42\n')
  const { code, stderr } = await checkRoutes(
    join(tmp, 'gateway.yaml'),
    routeYaml('/a', HANDLER, `phases: { filter: ${JSON.stringify(broken)} }`),
    routeYaml('/b', HANDLER, 'phases: { filter: not-function.mjs }'),
  )
  t.equal(code, 2, 'exit 2')
  t.match(stderr, `route /a: ${broken}: cannot load filter phase module: cannot start`)
  t.match(stderr, `route /b: ${notFunction}: its default export (number) is not a function`)
})
