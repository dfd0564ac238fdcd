/**
 * Issue 25: a WebSocket upstream (an mcp-edge process) SIGKILLed and restarted 10 times under 20
 * official-SDK sessions over two processes on Redis. The scenario and what it asserts: proxy-chaos.ts.
 */
import t from 'tap'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { freePort } from '../fixtures/waiting.ts'
import { chaos } from './proxy-chaos.ts'

t.setTimeout(900_000)

t.test('WebSocket upstream (an mcp-edge process) killed and restarted 10 times under 20 sessions, two processes on Redis', async (t) => {
  const port = await freePort()
  const config = { listen: { host: '127.0.0.1', port }, routes: [{ ...liveRoute, transports: ['websocket'] }] }
  let current: GatewayProcess | undefined = await startGatewayProcess(t, config)
  await chaos(t, {
    url: `ws://127.0.0.1:${port}/live`,
    tool: 'whoami',
    kill: async () => {
      const process = current
      current = undefined
      await process?.stop('SIGKILL')
    },
    start: async () => {
      current = await startGatewayProcess(t, config)
      // Its own word (the log line's time): the test reads the pipe later than that on a busy machine.
      return current.logs.find((line) => line.msg === 'mcp-edge listening')!.time as number
    },
  })
})
