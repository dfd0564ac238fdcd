/**
 * Issue 25, chaos for HTTP and WebSocket upstreams (the scenario; proxy-chaos-http.test.ts and
 * proxy-chaos-websocket.test.ts run it, as two files so that tap runs them side by side): one proxy route on two gateway processes sharing
 * Redis, behind a round-robin balancer, with two upstreams: `victim`, SIGKILLed and started again on
 * its port 10 times, and `steady`, never touched (server-everything over Streamable HTTP). Twenty
 * official-SDK sessions keep calling all along: ten call the victim's tool, ten the steady one's.
 * - every call is answered: a result, an `isError` result saying the upstream is unavailable, or a
 *   JSON-RPC error; never a hang, a dropped connection or a client timeout;
 * - the victim serves again within 2 s of each restart: both processes' health has it back by then
 *   (their logs say when), and every call begun 2 s after the restart succeeds;
 * - the steady sessions never see an error.
 * HTTP: the victim is server-everything over Streamable HTTP (its sessions are lost at each restart:
 * it answers 400 to the old ones). WebSocket: the victim is an mcp-edge process serving over WebSocket.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'
import { startRedis } from '../store/redis-server.ts'

const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 10)
const SESSIONS = 20
/** The victim's restart to the calls that must succeed. */
const SERVES_AGAIN_MS = 2000
/** Each session's calls begin at most this often. */
const PACE_MS = 100
/** No call may take longer than this (the upstream timeout is 5 s). */
const ANSWER_WITHIN_MS = 15_000

export interface Victim {
  url: string
  tool: string
  kill(): Promise<void>
  /** Starts it again; resolves with when (epoch ms) it listened. */
  start(): Promise<number>
}

interface Call { session: number; victim: boolean; begun: number; ended: number; outcome: 'result' | 'unavailable' | 'rpc-error' | 'unanswered'; detail: string }

export async function chaos(t: Test, victim: Victim): Promise<void> {
  const redis = await startRedis(t)
  const steady = await everythingOverHttp(t)
  const store = { type: 'redis', url: redis.url, key_prefix: 'chaos:' }
  const route = {
    location: '/p',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [
      { name: 'victim', url: victim.url, timeout: 5 },
      { name: 'steady', url: `${steady.origin}/mcp`, timeout: 5 },
    ],
  }
  const [a, b] = (await Promise.all([startGatewayProcess(t, { store, routes: [route] }), startGatewayProcess(t, { store, routes: [route] })])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, [a.url, b.url], { keepAlive: true })
  const clients = await Promise.all(Array.from({ length: SESSIONS }, async (_, n) => {
    const client = new Client({ name: `chaos-${n}`, version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${balancer.url}/p`)))
    t.teardown(() => client.close())
    return client
  }))
  const tools = (await clients[0]!.listTools()).tools.map((tool) => tool.name)
  t.ok(tools.includes(`victim__${victim.tool}`) && tools.includes('steady__echo'), 'both upstreams listed')

  const calls: Call[] = []
  let running = true
  const loops = clients.map(async (client, session) => {
    const isVictim = session < SESSIONS / 2
    const name = isVictim ? `victim__${victim.tool}` : 'steady__echo'
    for (let n = 0; running; n++) {
      const begun = Date.now()
      let outcome: Call['outcome']
      let detail = ''
      try {
        const result = (await client.callTool({ name, arguments: isVictim && victim.tool !== 'echo' ? {} : { message: `s${session} n${n}` } }, undefined, { timeout: ANSWER_WITHIN_MS })) as { isError?: boolean; content: Array<{ text?: string }> }
        detail = result.content[0]?.text ?? ''
        outcome = result.isError !== true ? 'result' : /unavailable/.test(detail) ? 'unavailable' : 'rpc-error'
      } catch (error) {
        detail = String(error)
        // A JSON-RPC error the gateway sent is an answer; the SDK's own timeout (-32001) or a broken connection is not.
        outcome = error instanceof McpError && error.code !== -32001 ? 'rpc-error' : 'unanswered'
      }
      calls.push({ session, victim: isVictim, begun, ended: Date.now(), outcome, detail })
      // Ten calls a second per session (200 in all): load, without starving a shared 2-core machine.
      await sleep(Math.max(0, PACE_MS - (Date.now() - begun)))
    }
  })

  const restarts: number[] = []
  const kills: number[] = []
  await sleep(1000)
  for (let round = 0; round < ROUNDS; round++) {
    kills.push(Date.now())
    await victim.kill()
    await sleep(300)
    restarts.push(await victim.start())
    await sleep(SERVES_AGAIN_MS + 3000)
  }
  running = false
  await Promise.all(loops)

  const victimCalls = calls.filter((call) => call.victim)
  const steadyCalls = calls.filter((call) => !call.victim)
  t.ok(victimCalls.length > ROUNDS * 20 && steadyCalls.length > ROUNDS * 20, `under load: ${victimCalls.length} victim calls, ${steadyCalls.length} steady calls`)
  const unanswered = calls.filter((call) => call.outcome === 'unanswered' || call.ended - call.begun > ANSWER_WITHIN_MS)
  t.same(unanswered.slice(0, 3), [], `every call answered (${unanswered.length} not)`)
  const steadyErrors = steadyCalls.filter((call) => call.outcome !== 'result')
  t.same(steadyErrors.slice(0, 3), [], `no steady session saw an error (${steadyErrors.length})`)
  const failedVictim = victimCalls.filter((call) => call.outcome !== 'result')
  t.ok(failedVictim.length > 0, `the kills were felt by the victim's sessions (${failedVictim.length} clean errors)`)
  t.ok(failedVictim.every((call) => call.outcome === 'unavailable' || call.outcome === 'rpc-error'), 'each as a clean error')
  if (process.env.CHAOS_DEBUG !== undefined) {
    const zero = kills[0]!
    for (const [index, process] of [a, b].entries()) {
      for (const line of process.logs) if (line.upstream === 'victim') console.error(`p${index} ${(line.time as number) - zero} ${line.msg} ${line.reason ?? ''}`)
    }
    console.error('kills', kills.map((k) => k - zero).join(' '), 'restarts', restarts.map((k) => k - zero).join(' '))
  }
  for (const [round, restarted] of restarts.entries()) {
    // Each process's own word: its health saw the victim back within 2 s of the restart.
    const backAfter = [a, b].map((process) => {
      const back = process.logs.find((line) => line.upstream === 'victim' && line.msg === 'upstream is back' && (line.time as number) > kills[round]!)
      return back === undefined ? Infinity : (back.time as number) - restarted
    })
    t.ok(backAfter.every((ms) => ms <= SERVES_AGAIN_MS), `round ${round + 1}: both processes had the victim back ${backAfter.map((ms) => `${ms} ms`).join(', ')} after the restart`)
    const nextKill = kills[round + 1] ?? Infinity
    const due = victimCalls.filter((call) => call.begun >= restarted + SERVES_AGAIN_MS && call.ended < nextKill)
    const late = due.filter((call) => call.outcome !== 'result')
    const servedAt = victimCalls.find((call) => call.begun >= restarted && call.outcome === 'result')
    t.ok(due.length > 0 && late.length === 0, `round ${round + 1}: served again ${servedAt === undefined ? '?' : servedAt.ended - restarted} ms after the restart; ${due.length} calls from 2 s on, ${late.length} failed${late.length > 0 ? `: ${late[0]!.detail}` : ''}`)
  }
}
