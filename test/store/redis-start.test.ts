/**
 * A clean start on the Redis store logs no error: the handler's setup registers its components before
 * the store's connection is up, and those registrations are no change to announce (issue 17, item 7:
 * every start logged "bus publish failed … Stream isn't writeable").
 */
import t from 'tap'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { startRedis } from './redis-server.ts'

t.setTimeout(120_000)

t.test('starting on Redis logs nothing at warn or above', async (t) => {
  const redis = await startRedis(t)
  const gateway = await startGatewayProcess(t, { store: { type: 'redis', url: redis.url, key_prefix: `start-${process.pid}:` }, routes: [liveRoute], request_state: { key: 'a-shared-key-of-32-characters-at' } })
  // The buffered log is flushed every second: wait for a line written after the start's.
  const response = await fetch(`${gateway.url}/healthz`)
  t.equal(response.status, 200)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const problems = gateway.logs.filter((line) => (line.level as number) >= 40)
  t.same(problems, [], 'no warning or error at start')
  t.equal(await gateway.stop(), 0)
})
