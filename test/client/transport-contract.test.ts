// The transport contract over Streamable HTTP and WebSocket (one in-process gateway) and stdio
// (`mcp-edge stdio` as a child process).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { StdioTransport, StreamableHttpTransport, WebSocketTransport } from '../../gateway/client/index.ts'
import { observed } from '../e2e/fixtures/live.ts'
import { gatewayWith, liveRoute } from './harness.ts'
import { transportContract } from './transport-contract.ts'

// The stdio child compiles the gateway with tsx before it answers.
t.setTimeout(120_000)

const repo = fileURLToPath(new URL('../../', import.meta.url))
const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const route = { ...liveRoute, transports: ['streamable_http', 'websocket'] }

t.test('over one gateway', async (t) => {
  const gateway = await gatewayWith(t, [route])
  await transportContract(t, 'streamable http', async () => ({ transport: new StreamableHttpTransport({ url: `${gateway.url}/live` }), observed }))
  await transportContract(t, 'websocket', async () => ({ transport: new WebSocketTransport({ url: `${gateway.url.replace(/^http/, 'ws')}/live` }), observed }))
})

await transportContract(t, 'stdio', async (t) => {
  const dir = t.testdir({
    'gateway.yaml': `log: { level: silent }
routes:
  - location: /live
    handler: ${JSON.stringify(liveRoute.handler)}
    server: { name: live, version: '1.0.0' }
`,
  })
  const transport = new StdioTransport({
    command: process.execPath,
    args: [path.join(repo, 'gateway/bin.mjs'), 'stdio', '--config', path.join(dir, 'gateway.yaml'), '--route', '/live'],
    cwd: repo,
  })
  // Registered before the client's close, so it runs after it: close ends stdin and waits for the exit.
  t.teardown(() => {
    const pid = transport.pid
    if (pid === undefined || !running(pid)) return
    process.kill(pid, 'SIGKILL')
    throw new Error(`the stdio gateway ${pid} outlived the client's close`)
  })
  return { transport }
})
