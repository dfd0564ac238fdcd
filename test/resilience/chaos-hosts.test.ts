/**
 * Chaos under load over two hosts (issue 16, the resilience suite): two gateway processes share one
 * Redis with persistence on (an append-only file synced before each reply) and serve tools/call at
 * a few hundred a second and progress streams, while one host is killed with SIGKILL (the producer
 * of the streams it held dies with it) and then Redis is killed and started again. Counted: 0
 * sessions lost, every call answered or refused cleanly (503 while Redis is away; a cut only for
 * what the dead host held), every cut stream resumed on the other host with each event once.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { startRedis } from '../store/redis-server.ts'
import { balancer, judge, underLoad } from './chaos-load.ts'

t.setTimeout(180_000)

t.test('two hosts on Redis: a host killed, then Redis restarted, under load', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-chaos-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const redis = await startRedis(t, { appendonlyDir: folder })
  const store = { type: 'redis', url: redis.url, key_prefix: 'chaos:', command_timeout: 1, connect_timeout: 1 }
  const route = { ...liveRoute, producer_timeout: 1 }
  const hosts = (await Promise.all([
    startGatewayProcess(t, { store, routes: [route] }),
    startGatewayProcess(t, { store, routes: [route] }),
  ])) as [GatewayProcess, GatewayProcess]
  const url = await balancer(t, hosts.map((host) => host.url))
  const windows: Array<[number, number]> = []
  const result = await underLoad({
    url, sessions: 20, callsPerSecond: Number(process.env.CHAOS_RATE ?? 200), streams: 6, steps: 25,
    faults: async (stream) => {
      await sleep(2000)
      // Streams produced by the host about to die: resumed through the balancer, so on the other.
      for (let n = 0; n < 3; n++) stream(`${hosts[0].url}/live`)
      await sleep(1000)
      const killed = performance.now()
      await hosts[0].stop('SIGKILL')
      windows.push([killed - 50, killed + 2000])
      t.comment('host A killed with SIGKILL')
      await sleep(2500)
      const down = performance.now()
      await redis.stop()
      await sleep(1000)
      await redis.start()
      t.comment(`Redis killed and started again: away ${Math.round(performance.now() - down)} ms`)
      await sleep(3500)
    },
  })
  await judge(t, url, result, windows)
  t.comment(`while Redis was away: ${result.tally.statuses.get(503) ?? 0} calls refused with 503`)
})
