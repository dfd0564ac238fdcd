/**
 * Chaos under load on one host (issue 16, the resilience suite): two workers on the cluster store
 * serve tools/call at a few hundred a second and progress streams, while one worker is killed with
 * SIGKILL (the primary starts another). Counted: 0 sessions lost, every call answered or refused
 * cleanly (a cut only for what the dead worker held), every cut stream resumed on the other worker
 * with each event once (the dead producer's request answered with -32603 after producer_timeout).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { balancer, judge, underLoad } from './chaos-load.ts'

t.setTimeout(180_000)

t.test('two workers, one killed with SIGKILL under load', async (t) => {
  const gateway = await startGatewayProcess(t, { workers: 2, drain_timeout: 3, routes: [{ ...liveRoute, producer_timeout: 1 }] }, 2)
  const listening = (): number[] => gateway.logs.filter((line) => line.msg === 'mcp-edge listening').map((line) => line.pid as number)
  const url = await balancer(t, [gateway.url])
  const windows: Array<[number, number]> = []
  const spans: Array<[number, number]> = []
  const victims: number[] = []
  const result = await underLoad({
    url, sessions: 20, callsPerSecond: Number(process.env.CHAOS_RATE ?? 200), streams: 6, steps: 25,
    faults: async (stream) => {
      await sleep(2000)
      // More streams, on fresh connections dealt to both workers in turn: some on the one about to die.
      for (let n = 0; n < 6; n++) stream(`${gateway.url}/live`)
      await sleep(1000)
      const victim = listening()[0]!
      const at = performance.now()
      const wallAt = Date.now()
      process.kill(victim, 'SIGKILL')
      victims.push(victim)
      windows.push([at - 50, at + 2000])
      // The primary's log line says when it knew (its clock is this machine's): a connection it dealt before then may be lost.
      const noticed = await gateway.logged((line) => String(line.msg).startsWith('worker killed'), 30_000)
      spans.push([at, at + (noticed.time as number) - wallAt])
      await gateway.logged(() => listening().length >= 3, 30_000)
      t.comment(`worker ${victim} killed; the primary started another in ${Math.round(performance.now() - at)} ms`)
      await sleep(3000)
    },
  })
  await judge(t, url, result, windows, { spans, victims, most: 3 })
})
