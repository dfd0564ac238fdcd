// The Redis store under Sentinel, for real: a master, a replica and a sentinel; two gateway processes
// find the master through the sentinel, and a session goes on across a failover (the sentinel
// promotes the replica while the session is open): the same session id, no new initialize.
import { Redis } from 'ioredis'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { post, rawSession } from '../e2e/sse-reader.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { startSentinel } from './redis-topologies.ts'

t.setTimeout(180_000)
const deployment = await startSentinel(t)
const store = { type: 'redis', sentinels: [deployment.sentinel], name: deployment.name, key_prefix: 'sentinel:', command_timeout: 1, connect_timeout: 1 }
const [a, b] = (await Promise.all([
  startGatewayProcess(t, { store, routes: [liveRoute] }),
  startGatewayProcess(t, { store, routes: [liveRoute] }),
])) as [GatewayProcess, GatewayProcess]

/** A new session through `base`, retried while the store is failing over (503); resolves with its id. */
async function session(base: string): Promise<{ id: string | null; retries: number }> {
  for (let retries = 0; ; retries++) {
    const answer = await post(`${base}/live`, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
    await answer.text()
    if (answer.status === 503 && retries < 100) {
      await sleep(100)
      continue
    }
    const id = answer.headers.get('mcp-session-id')
    if (id !== null) await (await post(`${base}/live`, id, { jsonrpc: '2.0', method: 'notifications/initialized' })).text()
    return { id, retries }
  }
}

/** A tools/call on the session through `base`; retried while the store is failing over (503). */
async function whoami(base: string, sessionId: string, id: number): Promise<{ status: number; pid?: number; retries: number }> {
  for (let retries = 0; ; retries++) {
    const answer = await post(`${base}/live`, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami' } })
    const body = await answer.text()
    if (answer.status === 503 && retries < 100) {
      await sleep(100)
      continue
    }
    if (answer.status !== 200) return { status: answer.status, retries }
    const result = JSON.parse(body) as { result: { content: Array<{ text: string }> } }
    return { status: 200, pid: (JSON.parse(result.result.content[0]!.text) as { pid: number }).pid, retries }
  }
}

t.test('a session survives a Sentinel failover, served by both gateways before and after', async (t) => {
  const sessionId = await rawSession(`${a.url}/live`)
  const before = [await whoami(a.url, sessionId, 1), await whoami(b.url, sessionId, 2)]
  t.same(before.map((answer) => answer.status), [200, 200], 'both gateways serve the session')
  t.not(before[0]!.pid, before[1]!.pid, 'from two processes')

  // Replication is asynchronous: what the master took just before it fails over may be lost. Wait
  // for the replica to hold the session, as a real failover after a quiet moment would find it.
  await deployment.synced()
  const { from, to } = await deployment.failover()
  t.not(from, to, `the sentinel promoted the replica (${from} → ${to})`)

  const after = [await whoami(a.url, sessionId, 3), await whoami(b.url, sessionId, 4)]
  t.same(after.map((answer) => answer.status), [200, 200], 'the same session id goes on, on both gateways, with no new initialize')
  t.comment(`requests refused with 503 while failing over: ${after.map((answer) => answer.retries).join(', ')}`)

  const promoted = new Redis({ port: to, host: '127.0.0.1' })
  t.teardown(() => promoted.disconnect())
  t.ok(await promoted.exists(`sentinel:s:{${sessionId}}`), 'the session lives on the new master')
  const started = await session(b.url)
  t.comment(`initialize refused with 503 while the gateway found the new master: ${started.retries}`)
  const fresh = started.id!
  t.ok(fresh, 'a session starts after the failover')
  t.equal((await whoami(a.url, fresh, 5)).status, 200, 'and works on the other gateway')
  t.ok(await promoted.exists(`sentinel:s:{${fresh}}`), 'and was written to the new master')
})
