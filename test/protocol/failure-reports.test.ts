/**
 * Unexpected handler failures (issue 16, row 12): a `ToolError` reaches the model as written; any
 * other exception is logged at error level with its stack and a reference, and the client sees only
 * "Tool X failed (ref …)" (a tool) or -32603 "Internal error (ref …)" (a prompt, a resource, a
 * completion), with the same reference in the log. On sessions and on the stateless wire alike.
 */
import { Writable } from 'node:stream'
import t from 'tap'
import { pino } from 'pino'
import { configFromObject } from '../../gateway/config/load.ts'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { buildGateway } from '../../gateway/server/server.ts'
import { assertNoLeak, HANDLER, inject, injectSession } from '../fixtures/transport-gateway.ts'

interface LogLine { level: number; msg: string; ref?: string; err?: { stack?: string; message?: string }; [key: string]: unknown }

async function gatewayWithLog(t: { teardown(fn: () => unknown): void }) {
  const lines: LogLine[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  const doc = { routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'transport', version: '1.0.0' } }] }
  const gateway = await buildGateway(configFromObject(doc, '<test>'), { logger: pino({ level: 'info' }, sink) })
  t.teardown(() => gateway.close())
  return { gateway, lines }
}

const SECRETS = /hunter2|postgres:|\/srv\/app|missing|field|Cannot read|internals leaked/

/** The log line for `ref`: error level, with the failure's stack. */
function logged(t: { ok(v: unknown, m: string): void; equal(a: unknown, b: unknown, m: string): void; match(a: unknown, b: unknown, m: string): void }, lines: LogLine[], ref: string, thrown: RegExp): void {
  const line = lines.find((l) => l.ref === ref)
  t.ok(line, `a log line carries ref ${ref}`)
  t.equal(line?.level, 50, 'at error level')
  t.match(line?.err?.stack, thrown, 'with the stack of what was thrown')
}

t.test('sessions: a ToolError as written; anything else a reference, logged', async (t) => {
  const { gateway, lines } = await gatewayWithLog(t)
  const session = { 'mcp-session-id': await injectSession(gateway) }
  const call = async (id: number, method: string, params: object) => (await inject(gateway, { jsonrpc: '2.0', id, method, params }, session))

  const refused = await call(1, 'tools/call', { name: 'refuse' })
  t.same(refused.json().result, { content: [{ type: 'text', text: 'quota exceeded: try again tomorrow' }], isError: true }, 'a ToolError reaches the model as written')

  for (const [id, tool, thrown] of [[2, 'typo', /TypeError/], [3, 'leak', /ECONNREFUSED/], [4, 'fail', /disk is on fire/]] as const) {
    const response = await call(id, 'tools/call', { name: tool })
    const result = response.json().result
    t.equal(result.isError, true, `${tool}: an isError result`)
    const text: string = result.content[0].text
    const ref = /^Tool (\S+) failed \(ref ([\w-]+)\)$/.exec(text)
    t.ok(ref, `${tool}: "${text}"`)
    t.equal(ref?.[1], tool, 'names the tool')
    t.notMatch(response.body, SECRETS, `${tool}: nothing of what was thrown`)
    logged(t, lines, ref?.[2] ?? '', thrown)
  }

  for (const [id, method, params, thrown] of [
    [5, 'prompts/get', { name: 'broken' }, /prompt internals leaked/],
    [6, 'resources/read', { uri: 'test://broken' }, /resource internals leaked/],
    [7, 'completion/complete', { ref: { type: 'ref/prompt', name: 'completes' }, argument: { name: 'topic', value: '' } }, /completion internals leaked/],
  ] as const) {
    const response = await call(id, method, params)
    const body = response.json()
    t.equal(body.id, id, `${method}: the request's id`)
    t.equal(body.error?.code, RpcCode.InternalError, `${method}: -32603`)
    const ref = /^Internal error \(ref ([\w-]+)\)$/.exec(body.error?.message ?? '')
    t.ok(ref, `${method}: "${body.error?.message}"`)
    assertNoLeak(t, response.body, 'internals leaked')
    logged(t, lines, ref?.[1] ?? '', thrown)
  }
})

t.test('stateless: the same', async (t) => {
  const { gateway, lines } = await gatewayWithLog(t)
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
  const headers = (method: string, name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name })
  const leak = await inject(gateway, { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'leak', _meta: envelope } }, headers('tools/call', 'leak'))
  const text: string = leak.json().result?.content?.[0]?.text ?? ''
  const ref = /^Tool leak failed \(ref ([\w-]+)\)$/.exec(text)
  t.ok(ref, `"${text}"`)
  t.notMatch(leak.body, SECRETS, 'nothing of what was thrown')
  logged(t, lines, ref?.[1] ?? '', /ECONNREFUSED/)

  const prompt = await inject(gateway, { jsonrpc: '2.0', id: 'b', method: 'prompts/get', params: { name: 'broken', _meta: envelope } }, headers('prompts/get', 'broken'))
  const body = prompt.json()
  t.equal(body.id, 'b')
  t.equal(body.error?.code, RpcCode.InternalError)
  const promptRef = /^Internal error \(ref ([\w-]+)\)$/.exec(body.error?.message ?? '')
  t.ok(promptRef, `"${body.error?.message}"`)
  logged(t, lines, promptRef?.[1] ?? '', /prompt internals leaked/)
})
