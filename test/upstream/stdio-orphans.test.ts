/**
 * Issue 25: a worker killed outright (SIGKILL, the OOM killer) runs no exit hook, and a stdio child
 * that does not exit when its stdin closes (the real server-everything does not) ran on for good.
 * The cluster primary, told of each child's process group as it starts, kills the dead worker's
 * groups; the new worker starts its own child.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { eventually } from '../client/harness.ts'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { everythingServer as everything } from '../fixtures/everything-server.ts'
import { childrenOf } from './stdio-children.ts'

t.setTimeout(120_000)
/** What the children's shells sleep once their server is gone: odd, so the teardown kills only theirs. */
const LINGER = `600.${process.pid}`

/** Dead: gone, or a zombie nobody reaped yet (in a container, pid 1 may never reap it). */
function dead(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return true
  }
}

t.test('a worker killed with SIGKILL: the primary ends its stdio children', async (t) => {
  // Behind a shell that outlives it (as wrapper scripts do): the group lives on after stdin closes,
  // as a server that ignores EOF would (server-everything itself exits on EOF before a session).
  const command = ['sh', '-c', `node "$0" stdio; exec sleep ${LINGER}`, everything]
  const route = { location: '/ev', server: { name: 'proxy', version: '1.0.0' }, upstreams: [{ name: 'everything', command }] }
  const gateway = await startGatewayProcess(t, { workers: 2, routes: [route] }, 2)
  const workers = gateway.logs.filter((line) => line.msg === 'mcp-edge listening').map((line) => line.pid as number)
  await eventually(() => workers.every((worker) => childrenOf(worker, 'server-everything').length === 1), 60_000)
  const [victim, survivor] = workers as [number, number]
  const orphan = childrenOf(victim, 'server-everything')[0]!
  const kept = childrenOf(survivor, 'server-everything')[0]!
  // The harness SIGKILLs the whole gateway at teardown, and nothing of it is left to clean up
  // after: what this test's children left (marked by their odd sleep) goes with the test.
  t.teardown(() => {
    spawnSync('pkill', ['-KILL', '-f', `sleep ${LINGER}`])
  })
  process.kill(victim, 'SIGKILL')
  await eventually(() => dead(orphan), 10_000)
  t.ok(dead(orphan), 'the killed worker\'s child is ended')
  t.notOk(dead(kept), 'the other worker\'s child runs on')
  // The replacement worker starts a child of its own.
  await eventually(() => gateway.logs.filter((line) => line.msg === 'mcp-edge listening').length >= 3, 30_000)
  const replacement = gateway.logs.filter((line) => line.msg === 'mcp-edge listening').at(-1)!.pid as number
  await eventually(() => childrenOf(replacement, 'server-everything').length === 1, 60_000)
  t.pass('the new worker runs its own child')
})
