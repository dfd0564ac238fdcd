/**
 * Virtual routes (`include:`) with real upstreams, driven by the official SDK client: two bundles show
 * different tools of one stdio upstream and of server-everything (Streamable HTTP) beside handler
 * tools of another route; the stdio upstream runs one child that saw one initialize, however many
 * bundles and sessions use it; scopes and phases are each bundle's own. And the config check: an
 * include naming an unknown route or upstream is a clear config error.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'
import { eventually } from '../fixtures/waiting.ts'
import { childrenOf } from '../upstream/stdio-children.ts'

t.setTimeout(90_000)
const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url))
const ECHO_FIXTURE = here('../upstream/fixtures/echo-server.mjs')
const MATH_KEY = 'k-math-0123456789abcdef'
const PLAIN_KEY = 'k-plain-0123456789abcdef'

const textOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content.map((block) => block.text).join('\n')

t.test('two bundles over one stdio upstream, server-everything and a handler route', async (t) => {
  const { port } = await everythingOverHttp(t, 20_000)
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-virtual-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const keys = path.join(folder, 'keys.yaml')
  const sha = (key: string): string => createHash('sha256').update(key).digest('hex')
  writeFileSync(keys, `keys:\n  - sha256: ${sha(MATH_KEY)}\n    principal: math\n    scopes: [math]\n  - sha256: ${sha(PLAIN_KEY)}\n    principal: plain\n    scopes: []\n`)
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    routes: [
      { location: '/generated', handler: here('./fixtures/generated-tools.ts'), server: { name: 'generated', version: '1.0.0' }, options: { count: 110 } },
      { location: '/fleet', server: { name: 'fleet', version: '1.0.0' }, upstreams: [{ name: 'fx', command: [process.execPath, ECHO_FIXTURE], isolation: 'shared', pool: { min: 1, max: 1 } }] },
      { location: '/everything', server: { name: 'everything', version: '1.0.0' }, upstreams: [{ name: 'everything', url: `http://127.0.0.1:${port}/mcp`, timeout: 20 }] },
      {
        location: '/va',
        server: { name: 'bundle-a', version: '1.0.0' },
        include: [
          { route: '/generated', tools: ['crm_get_*', 'crm_delete_*'] },
          { route: '/fleet', upstream: 'fx', tools: ['echo'] },
          { route: '/everything', upstream: 'everything', tools: ['echo', 'get-sum'], prefix: 'ev_' },
        ],
        auth: { api_keys: keys },
        scopes: { tools: { 'ev_get-sum': ['math'] } },
      },
      {
        location: '/vb',
        server: { name: 'bundle-b', version: '1.0.0' },
        include: [
          { route: '/fleet', upstream: 'fx', tools: ['echo', 'stats'], prefix: 'b_' },
          { route: '/everything', upstream: 'everything', tools: ['get-tiny-image'] },
          { route: '/generated', tools: ['crm_delete_contact'] },
        ],
        phases: { filter: here('./fixtures/filter.ts') },
      },
      {
        location: '/vc',
        server: { name: 'bundle-c', version: '1.0.0' },
        include: [{ route: '/fleet', upstream: 'fx', tools: ['echo'] }],
        approval: { tools: ['echo'] },
      },
    ],
  }, '<test>')
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())

  const connect = async (location: string, key?: string): Promise<Client> => {
    const client = new Client({ name: 'virtual-test', version: '1.0.0' })
    const headers: Record<string, string> = key === undefined ? {} : { 'x-api-key': key }
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}${location}`), { requestInit: { headers } })
    await client.connect(transport)
    t.teardown(async () => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
    })
    return client
  }
  const [a, aPlain, b, c, fleet, everything] = await Promise.all([connect('/va', MATH_KEY), connect('/va', PLAIN_KEY), connect('/vb'), connect('/vc'), connect('/fleet'), connect('/everything')])

  t.test('each bundle lists its own selection', async (t) => {
    const names = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name)
    t.same(await names(a), ['crm_get_contact', 'crm_delete_contact', 'echo', 'ev_echo', 'ev_get-sum'])
    t.same(await names(aPlain), ['crm_get_contact', 'crm_delete_contact', 'echo', 'ev_echo'], 'ev_get-sum hidden without the math scope (the bundle’s own scopes)')
    t.same(await names(b), ['crm_delete_contact', 'b_echo', 'get-tiny-image'], 'the fixture lists only echo: b_stats is not listed, yet its glob lets it be called')
  })

  t.test('calls reach the upstream through the route that fronts it: one child, one initialize', async (t) => {
    const viaA = JSON.parse(textOf(await a.callTool({ name: 'echo', arguments: { marker: 'a' } }))) as { marker: string; pid: number }
    const viaB = JSON.parse(textOf(await b.callTool({ name: 'b_echo', arguments: { marker: 'b' } }))) as { marker: string; pid: number }
    const direct = JSON.parse(textOf(await fleet.callTool({ name: 'echo', arguments: { marker: 'fleet' } }))) as { marker: string; pid: number }
    t.equal(viaA.marker, 'a')
    t.equal(viaB.marker, 'b')
    t.equal(viaA.pid, viaB.pid, 'both bundles reach the same child')
    t.equal(direct.pid, viaA.pid, 'the one the source route uses')
    const stats = JSON.parse(textOf(await b.callTool({ name: 'b_stats', arguments: {} }))) as { initializes: number; pid: number }
    t.equal(stats.initializes, 1, 'the upstream saw one initialize')
    t.same(childrenOf(process.pid, 'echo-server.mjs'), [viaA.pid], 'one child process in all')
    const unknown = await a.callTool({ name: 'stats', arguments: {} }).catch((error: Error) => error.message)
    t.match(unknown, /Unknown tool: stats/, "a tool outside a bundle's selection is unknown there")
  })

  t.test('server-everything (Streamable HTTP) under a prefix; handler tools with their own callbacks', async (t) => {
    t.equal(textOf(await a.callTool({ name: 'ev_echo', arguments: { message: 'hi' } })), 'Echo: hi')
    t.match(textOf(await a.callTool({ name: 'ev_get-sum', arguments: { a: 2, b: 40 } })), /42/)
    const image = await b.callTool({ name: 'get-tiny-image', arguments: {} })
    t.ok((image.content as Array<{ type: string }>).some((block) => block.type === 'image'), 'an image from server-everything')
    t.same((await a.callTool({ name: 'crm_get_contact', arguments: { id: 'c-1' } })).structuredContent, { tool: 'crm_get_contact', args: { id: 'c-1' } })
  })

  t.test("scopes and phases are the bundle's own", async (t) => {
    const refused = await aPlain.callTool({ name: 'ev_get-sum', arguments: { a: 1, b: 1 } }).catch((error: Error) => error.message)
    t.match(refused, /Forbidden: tool ev_get-sum needs scope math/, 'refused on the bundle without the scope')
    t.match(textOf(await everything.callTool({ name: 'get-sum', arguments: { a: 1, b: 1 } })), /2/, 'the same tool is open on its own route')
    const withheld = await b.callTool({ name: 'crm_delete_contact', arguments: { id: 'c-1' } }).catch((error: Error) => error.message)
    t.match(withheld, /withheld/, "bundle b's filter phase withholds it")
    t.same((await a.callTool({ name: 'crm_delete_contact', arguments: { id: 'c-1' } })).structuredContent, { tool: 'crm_delete_contact', args: { id: 'c-1' } }, 'bundle a has no such filter')
    const unapproved = await c.callTool({ name: 'echo', arguments: { marker: 'c' } }).catch((error: Error) => error.message)
    t.match(unapproved, /needs the user's approval/, "bundle c's approval gate stops the call (this client cannot ask its user)")
  })

  // Last: it crashes the shared child.
  t.test('an included upstream that goes away is a list_changed on every bundle that includes it', async (t) => {
    let changedA = 0
    let changedB = 0
    a.setNotificationHandler(ToolListChangedNotificationSchema, () => void changedA++)
    b.setNotificationHandler(ToolListChangedNotificationSchema, () => void changedB++)
    await fleet.callTool({ name: 'crash', arguments: {} }).catch(() => undefined)
    await eventually(() => changedA > 0 && changedB > 0, 20_000)
    t.pass(`bundle a heard ${changedA}, bundle b ${changedB}`)
  })
})

t.test('config: an include must name a route, and an upstream, of this config', async (t) => {
  const route = (extra: object): object => ({ location: '/v', server: { name: 'v', version: '1.0.0' }, ...extra })
  const proxy = { location: '/p', server: { name: 'p', version: '1.0.0' }, upstreams: [{ name: 'up', url: 'http://127.0.0.1:9/mcp' }] }
  const failure = (routes: object[]): string => {
    try {
      configFromObject({ routes }, '<test>')
    } catch (error) {
      return (error as Error).message
    }
    return 'no error'
  }
  t.match(failure([proxy, route({ include: [{ route: '/nope', tools: ['*'] }] })]), /routes\[1\]\.include\[0\]\.route.*include names route "\/nope", which this config does not have \(routes: \/p\)/s)
  t.match(failure([proxy, route({ include: [{ route: '/p', upstream: 'down', tools: ['*'] }] })]), /route "\/p" has no upstream "down" \(its upstreams: up\)/)
  t.match(failure([proxy, route({ include: [{ route: '/p', tools: ['*'] }] })]), /route "\/p" has no handler whose tools could be included/)
  t.match(failure([proxy, route({ include: [{ route: '/v', tools: ['*'] }] })]), /a route cannot include itself/)
  t.match(failure([proxy, route({ include: [{ route: '/p', upstream: 'up', tools: ['*'] }] }), { ...(route({ include: [{ route: '/v', tools: ['*'] }] }) as object), location: '/w' }]), /route "\/v" is itself a virtual route/)
  t.match(failure([route({ include: [{ route: '/p', upstream: 'up', tools: ['*'] }], upstreams: [{ name: 'own', url: 'http://127.0.0.1:9/mcp' }] }), proxy]), /a route with include has no upstreams of its own/)
  t.match(failure([route({ include: [{ route: '/p', upstream: 'up', tools: [] }] }), proxy]), /tools/, 'an empty selection is refused by the schema')
  t.equal(failure([proxy, route({ include: [{ route: '/p', upstream: 'up', tools: ['*'] }] })]), 'no error', 'a valid include passes')
  t.match(failure([route({ catalogue: 'everything', handler: 'x.ts' })]), /catalogue/, 'catalogue is full or search')
})

t.test('two included handler tools of one name: the start fails, naming the route', async (t) => {
  const generated = here('./fixtures/generated-tools.ts')
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    routes: [
      { location: '/g1', handler: generated, server: { name: 'g1', version: '1.0.0' }, options: { count: 5 } },
      { location: '/g2', handler: generated, server: { name: 'g2', version: '1.0.0' }, options: { count: 5 } },
      { location: '/v', server: { name: 'v', version: '1.0.0' }, include: [{ route: '/g1', tools: ['crm_*'] }, { route: '/g2', tools: ['crm_*'] }] },
    ],
  }, '<test>')
  await t.rejects(startGateway(config), { code: 'MCP_EDGE_CONFIG_INVALID', message: /route \/v: include: .*duplicate tool "crm_get_contact"/ })
})
