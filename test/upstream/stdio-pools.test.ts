// A worker's stdio pools: one per configured upstream object, made on first use, all closed at once.
import t from 'tap'
import { pino } from 'pino'
import { McpClient } from '../../gateway/client/index.ts'
import { StdioPools } from '../../gateway/upstream/stdio-pools.ts'
import { alive, answer, echoServer } from './stdio-harness.ts'

t.test('a pool per upstream config, sessions keyed as asked, every child gone after close()', async (t) => {
  const pools = new StdioPools({ log: pino({ level: 'silent' }), baseDir: process.cwd() })
  t.teardown(() => pools.close())
  const routeA = { name: 'echo', command: ['node', echoServer] }
  const routeB = { name: 'echo', command: `node ${echoServer}` }
  const pids: number[] = []
  for (const [upstream, session] of [[routeA, 's1'], [routeA, 's2'], [routeB, 's3']] as const) {
    const client = new McpClient(pools.transport(upstream, { session }))
    await client.initialize()
    pids.push(answer<{ pid: number }>(await client.callTool('echo', { marker: session })).pid)
  }
  t.equal(pools.pool(routeA), pools.pool(routeA), 'one pool per upstream object')
  t.not(pools.pool(routeA), pools.pool(routeB), 'two routes naming the same server have two pools')
  t.same(pools.status().map((s) => [s.upstream, s.children.length]), [['echo', 2], ['echo', 1]])
  t.throws(() => pools.transport({ name: 'web' }, {}), /has no command/)
  await pools.close()
  t.same(pids.filter(alive), [], 'every child is gone')
  t.throws(() => pools.transport(routeA, { session: 'late' }), /closed/)
})
