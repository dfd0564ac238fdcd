/**
 * `limits.roots_cache`: the roots of at most that many sessions are kept per worker (clients that
 * announce changes are asked once); past it the least recently used session's roots are dropped and
 * its client is asked again. Real gateway, official SDK clients, the live fixture's `roots` tool.
 */
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { connect, fixture, gatewayWith } from '../e2e/harness.ts'

t.setTimeout(60_000)

t.test('the roots cache holds limits.roots_cache sessions (a top-level limit) and drops the least recently used', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } }], { limits: { roots_cache: 2 } })
  const asked = { a: 0, b: 0, c: 0, plain: 0 }
  const client = (name: keyof typeof asked, listChanged: boolean) =>
    connect(t, `${gateway.url}/live`, { roots: { listChanged } }, (c) => {
      c.setRequestHandler(ListRootsRequestSchema, async () => {
        asked[name]++
        return { roots: [{ uri: `file:///${name}` }] }
      })
    })
  const text = async (c: Awaited<ReturnType<typeof client>>): Promise<string> =>
    ((await c.callTool({ name: 'roots' })) as { content: Array<{ text: string }> }).content[0]!.text
  const [a, b, c, plain] = await Promise.all([client('a', true), client('b', true), client('c', true), client('plain', false)])

  t.equal(await text(a), 'file:///a')
  t.equal(await text(a), 'file:///a')
  t.equal(asked.a, 1, 'a client that announces changes is asked once while its roots are cached')
  t.equal(await text(plain), 'file:///plain')
  t.equal(await text(plain), 'file:///plain')
  t.equal(asked.plain, 2, 'a client that cannot announce changes is asked every time (and takes no cache entry)')

  t.equal(await text(b), 'file:///b')
  t.equal(await text(a), 'file:///a')
  t.equal(asked.a, 1, 'two sessions fit: a is still cached, and now the most recently used')
  t.equal(await text(c), 'file:///c')
  t.equal(await text(b), 'file:///b')
  t.equal(asked.b, 2, 'a third session dropped the least recently used (b), whose client is asked again')
  t.equal(await text(c), 'file:///c')
  t.equal(asked.c, 1, 'c stayed cached')
  t.equal(await text(a), 'file:///a')
  t.equal(asked.a, 2, 'b coming back dropped a, the least recently used by then')
})
