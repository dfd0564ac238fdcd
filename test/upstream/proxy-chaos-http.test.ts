/**
 * Issue 25: an HTTP upstream (server-everything over Streamable HTTP; its sessions are lost at each
 * restart: it answers 400 to the old ones) SIGKILLed and restarted 10 times under 20 official-SDK
 * sessions over two processes on Redis. The scenario and what it asserts: proxy-chaos.ts.
 */
import t from 'tap'
import { restartableEverything } from '../fixtures/everything-server.ts'
import { chaos } from './proxy-chaos.ts'

t.setTimeout(900_000)

t.test('HTTP upstream (server-everything) killed and restarted 10 times under 20 sessions, two processes on Redis', async (t) => {
  const everything = await restartableEverything(t)
  await chaos(t, {
    url: `${everything.origin}/mcp`,
    tool: 'echo',
    kill: () => everything.kill(),
    start: async () => {
      await everything.start()
      return Date.now()
    },
  })
})
