/**
 * A hostile upstream: a raw HTTP server that speaks just enough MCP to be initialized, then answers
 * tool calls with malformed JSON, an oversize body, an answer to an id nobody asked, an SSE stream
 * that never answers, or nothing at all. Every downstream call gets a clean isError result within
 * the upstream's timeout, another session sees nothing of it, and the gateway serves on.
 */
import type { ServerResponse } from 'node:http'
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { gatewayWith } from '../client/harness.ts'
import { rawUpstream } from '../fixtures/raw-upstream.ts'

const text = (result: { content?: unknown }): string => ((result.content as Array<{ text: string }>)[0]!.text)

/** The misbehaving upstream; `tools/call` behaves as the tool's name says. */
async function hostileUpstream(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const held: ServerResponse[] = []
  return rawUpstream(t, (message, response) => {
    const json = (body: unknown): void => void response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hostile' }).end(JSON.stringify(body))
    switch (message.method === 'tools/call' ? message.params?.name : message.method) {
      case 'initialize':
        return json({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '0' } } })
      case 'tools/list':
        return json({ jsonrpc: '2.0', id: message.id, result: { tools: ['ok', 'malformed', 'oversize', 'stranger', 'silent-stream', 'hang'].map((name) => ({ name, inputSchema: { type: 'object' } })) } })
      case 'ping':
        return json({ jsonrpc: '2.0', id: message.id, result: {} })
      case 'ok':
        return json({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'fine' }] } })
      case 'malformed':
        return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":')
      case 'oversize':
        return json({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'x'.repeat(64 * 1024) }] } })
      case 'stranger':
        return json({ jsonrpc: '2.0', id: 987654, result: { content: [{ type: 'text', text: 'for nobody' }] } })
      case 'silent-stream':
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        response.write(': nothing to say\n\n')
        held.push(response)
        return
      default:
        held.push(response)
    }
  }, () => {
    for (const response of held) response.destroy()
  })
}

t.test('every failure of a bad upstream is a clean isError within the timeout, and nothing leaks', async (t) => {
  const url = await hostileUpstream(t)
  const proxy = await gatewayWith(t, [{
    location: '/p',
    server: { name: 'p', version: '1.0.0' },
    upstreams: [{ name: 'hostile', url, timeout: 1, max_message_size: 8192, health_interval: 60 }],
    prefix: 'never',
  }])
  const open = async (): Promise<McpClient> => {
    const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/p` }), { timeoutMs: 10_000 })
    await client.initialize()
    t.teardown(() => client.close())
    return client
  }
  const [one, other] = await Promise.all([open(), open()])
  t.equal(text(await one.callTool('ok')), 'fine')

  for (const name of ['malformed', 'oversize', 'stranger', 'silent-stream', 'hang']) {
    const started = Date.now()
    const result = await one.callTool(name)
    t.equal(result.isError, true, `${name}: an isError result`)
    const timedOut = name === 'stranger' || name === 'silent-stream' || name === 'hang'
    t.match(text(result), timedOut ? /upstream server "hostile" did not answer this call within 1 s/ : /upstream server "hostile" is unavailable/, `${name}: that says what happened`)
    t.ok(Date.now() - started < 3000, `${name}: within the upstream's timeout (${Date.now() - started} ms)`)
    // No answer in time, like a broken answer, fails that request only: the upstream answers the
    // others meanwhile (its probe, a ping, finds one that answers nothing at all).
    const health = await (await fetch(`${proxy.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string }>> }
    t.equal(health.upstreams['/p']!.hostile!.state, 'up', `${name}: the upstream counts as up`)
    t.equal(text(await other.callTool('ok')), 'fine', `${name}: another session's call is served at once`)
  }
  t.equal(text(await other.callTool('ok')), 'fine', 'the other session was never answered with anything of the first')
  t.equal(text(await one.callTool('ok')), 'fine', 'the gateway serves on')
})

