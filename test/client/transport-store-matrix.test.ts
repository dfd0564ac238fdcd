// The transport contract as a matrix: every network transport (Streamable HTTP, WebSocket) over every
// session store backend (memory, cluster primary over IPC, Redis), as lua-resty-mcp runs its cases
// for each transport and bus. The conversation is the one in transport-contract.ts; only where the
// sessions live changes. (stdio serves one session from its own memory store: transport-contract.test.ts.)
import t from 'tap'
import { StreamableHttpTransport, WebSocketTransport } from '../../gateway/client/index.ts'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { observed } from '../e2e/fixtures/live.ts'
import { storeBackends } from '../store/backends.ts'
import { liveRoute } from './harness.ts'
import { transportContract } from './transport-contract.ts'

// A forked primary and a redis-server start here; more than tap's 30 s for the file on a slow machine.
t.setTimeout(240_000)

const route = { ...liveRoute, transports: ['streamable_http', 'websocket'] }

for (const backend of storeBackends) {
  t.test(`${backend.name} store`, async (t) => {
    const store = await backend.open(t)
    const config = configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, routes: [route] }, '<test>')
    const gateway = await startGateway(config, { store })
    t.teardown(() => gateway.close())
    await transportContract(t, 'streamable http', async () => ({ transport: new StreamableHttpTransport({ url: `${gateway.url}/live` }), observed }))
    await transportContract(t, 'websocket', async () => ({ transport: new WebSocketTransport({ url: `${gateway.url.replace(/^http/, 'ws')}/live` }), observed }))
  })
}
