// The shipped /guess route keeps each game in ctx.session.state. The official 2.x client speaks the
// stateless 2026-07-28 wire, where there is no session: its `start` must say so in words the model and
// its user can act on (it said "a stateless request asks the client through ctx", meant for authors).
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'

t.setTimeout(90_000)
const config = await loadConfig(DEFAULT_CONFIG_FILE)
config.listen.port = 0
config.log.level = 'silent'
config.routes = config.routes.filter((route) => route.location === '/guess')
const gateway = await startGateway(config)
t.teardown(() => gateway.close())

t.test('a stateless client starting a game is told it needs a session client', async (t) => {
  const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } })
  await client.connect(new TransportV2(new URL(`${gateway.url}/guess`)))
  t.teardown(() => client.close())
  t.equal(client.getProtocolEra(), 'modern')
  const result = await client.callTool({ name: 'start', arguments: {} })
  t.equal(result.isError, true)
  const text = (result.content as { text: string }[])[0]?.text ?? ''
  t.match(text, /per-session state/)
  t.match(text, /use a client that opens a session \(MCP 2025-11-25 or earlier\)/)
  t.notMatch(text, /ctx/, 'no handler-author vocabulary')
})
