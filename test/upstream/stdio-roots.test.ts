/**
 * Issue 25, defect 3 (security): one user's roots never become another's sandbox. The real
 * server-filesystem behind a proxy route, two users (two sessions whose clients declare different
 * roots). A shared child is never asked for a user's roots: it keeps its own directories, or gets
 * the upstream's configured `roots`; with `isolation: session` each user's child gets that user's.
 * In every case user B cannot read a file only user A's roots allow.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { eventually } from '../fixtures/waiting.ts'

interface Teardown { teardown(fn: () => unknown): void }

t.setTimeout(180_000)
const filesystem = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', import.meta.url))
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

const base = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-edge-roots-')))
t.teardown(() => rmSync(base, { recursive: true, force: true }))
const dirs = { public: join(base, 'public'), a: join(base, 'a'), b: join(base, 'b') }
for (const dir of Object.values(dirs)) mkdirSync(dir)
writeFileSync(join(dirs.public, 'public.txt'), 'for everyone')
writeFileSync(join(dirs.a, 'secret-a.txt'), 'only for user A')
writeFileSync(join(dirs.b, 'notes-b.txt'), 'only for user B')

interface User { client: Client; asked: number }

/** A user whose client offers `root` as its only root, and counts how often it was asked for it. */
async function user(t: Teardown, url: string, root: string): Promise<User> {
  const client = new Client({ name: 'roots-user', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } })
  const user: User = { client, asked: 0 }
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    user.asked++
    return { roots: [{ uri: pathToFileURL(root).href, name: 'mine' }] }
  })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  t.teardown(() => client.close())
  return user
}

/** What `who` gets for reading `path`: the file's text, or undefined when refused. */
async function read(who: User, path: string): Promise<string | undefined> {
  try {
    const result = await who.client.callTool({ name: 'read_text_file', arguments: { path } })
    return (result as { isError?: boolean }).isError === true ? undefined : text(result)
  } catch {
    return undefined
  }
}

/**
 * Both users say their roots changed (a server that follows roots asks again), with calls in flight
 * meanwhile; then, for each user, until its child lists `expect(user)` among its allowed directories:
 * server-filesystem asks for roots after it starts and applies the answer in its own time (under load
 * a fixed wait was not enough), and what is asserted is which directories it got, not how fast.
 */
async function announce(users: User[], expect?: (who: User) => string): Promise<void> {
  await Promise.all(users.map(async (who) => {
    await who.client.sendRootsListChanged()
    await who.client.callTool({ name: 'list_allowed_directories', arguments: {} })
  }))
  if (expect === undefined) return
  await Promise.all(users.map((who) => eventually(async () => {
    const allowed = text(await who.client.callTool({ name: 'list_allowed_directories', arguments: {} }))
    return allowed.includes(expect(who))
  }, 10_000)))
}

function proxyRoute(upstream: object): object {
  return { location: '/fs', server: { name: 'proxy', version: '1.0.0' }, upstreams: [{ name: 'fs', ...upstream }], prefix: 'never' }
}

t.test('isolation: shared (the default): the child keeps its own directories, never a user\'s roots', async (t) => {
  const gateway = await gatewayWith(t, [proxyRoute({ command: ['node', filesystem, dirs.public] })])
  const a = await user(t, `${gateway.url}/fs`, dirs.a)
  const b = await user(t, `${gateway.url}/fs`, dirs.b)
  await announce([a, b])
  t.equal(await read(b, join(dirs.a, 'secret-a.txt')), undefined, 'B cannot read A\'s file')
  t.equal(await read(a, join(dirs.b, 'notes-b.txt')), undefined, 'nor A B\'s')
  t.equal(await read(b, join(dirs.public, 'public.txt')), 'for everyone', 'the child\'s own directory serves')
  t.equal(a.asked + b.asked, 0, 'no user was asked for roots by the shared child')
})

t.test('isolation: shared with the upstream\'s roots: the child is told those, never a user\'s', async (t) => {
  // Started without directories: server-filesystem needs roots from its client, which the pool answers.
  const gateway = await gatewayWith(t, [proxyRoute({ command: ['node', filesystem], roots: [dirs.public] })])
  const a = await user(t, `${gateway.url}/fs`, dirs.a)
  const b = await user(t, `${gateway.url}/fs`, dirs.b)
  await announce([a, b], () => dirs.public)
  t.equal(await read(a, join(dirs.public, 'public.txt')), 'for everyone', 'the configured root serves A')
  t.equal(await read(b, join(dirs.public, 'public.txt')), 'for everyone', 'and B')
  t.equal(await read(b, join(dirs.a, 'secret-a.txt')), undefined, 'B cannot read A\'s file')
  t.equal(await read(a, join(dirs.a, 'secret-a.txt')), undefined, 'nor A, whose roots the shared child never sees')
  t.equal(a.asked + b.asked, 0, 'no user was asked for roots')
  const allowed = text(await b.client.callTool({ name: 'list_allowed_directories', arguments: {} }))
  t.ok(allowed.includes(dirs.public) && !allowed.includes(dirs.a), `the child's directories are the route's: ${allowed}`)
})

t.test('isolation: session: each user\'s child gets that user\'s roots, and only that user\'s', async (t) => {
  const gateway = await gatewayWith(t, [proxyRoute({ command: ['node', filesystem], isolation: 'session' })])
  const a = await user(t, `${gateway.url}/fs`, dirs.a)
  const b = await user(t, `${gateway.url}/fs`, dirs.b)
  await announce([a, b], (who) => (who === a ? dirs.a : dirs.b))
  t.equal(await read(a, join(dirs.a, 'secret-a.txt')), 'only for user A', 'A reads A\'s file')
  t.equal(await read(b, join(dirs.a, 'secret-a.txt')), undefined, 'B cannot')
  t.equal(await read(b, join(dirs.b, 'notes-b.txt')), 'only for user B', 'B reads B\'s file')
  t.equal(await read(a, join(dirs.b, 'notes-b.txt')), undefined, 'A cannot')
  t.ok(a.asked > 0 && b.asked > 0, 'each user was asked by its own child')
})

t.test('isolation: session: a new session\'s first call already has its roots (no listing first, no retry)', async (t) => {
  // server-filesystem asks for roots once initialized and applies them in its own time: a call
  // written right behind the handshake met an empty sandbox ("Access denied") on every new session.
  const gateway = await gatewayWith(t, [proxyRoute({ command: ['node', filesystem], isolation: 'session' })])
  for (let round = 0; round < 4; round++) {
    const [own, other] = round % 2 === 0 ? [dirs.a, dirs.b] : [dirs.b, dirs.a]
    const who = await user(t, `${gateway.url}/fs`, own)
    const file = own === dirs.a ? join(dirs.a, 'secret-a.txt') : join(dirs.b, 'notes-b.txt')
    t.equal(await read(who, file), own === dirs.a ? 'only for user A' : 'only for user B', `session ${round + 1}: its first call reads its own file`)
    t.equal(await read(who, join(other, other === dirs.a ? 'secret-a.txt' : 'notes-b.txt')), undefined, `session ${round + 1}: not the other user's`)
    t.equal(who.asked, 1, `session ${round + 1}: its child asked its client once`)
  }
})
