/**
 * `state_dir`: a server that keeps its state in files keeps each principal's (or session's) apart.
 * The real server-memory, which writes its knowledge graph to one file (MEMORY_FILE_PATH), behind
 * the pool: without state_dir two principals' separate children shared that file, so one user read
 * another's graph; with it each has its own folder, and a session's folder goes with the session.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { resolveStdioUpstream } from '../../gateway/upstream/stdio-pool-config.ts'
import type { JsonObject } from '../../gateway/wire/mcp-types.ts'
import { connect, eventually, poolFor } from './stdio-harness.ts'

t.setTimeout(120_000)
const memory = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url))
const base = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-edge-state-')))
t.teardown(() => rmSync(base, { recursive: true, force: true }))

const graphOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]!.text
const entity = (name: string): JsonObject => ({ entities: [{ name, entityType: 'note', observations: [`written by ${name}`] }] })

t.test('principal isolation without state_dir: the children share the server\'s one file (why state_dir exists)', async (t) => {
  const file = join(base, 'shared-memory.jsonl')
  const { pool } = poolFor(t, { command: ['node', memory], isolation: 'principal', env: { MEMORY_FILE_PATH: file } })
  const alice = await connect(t, pool, { session: 'a1', principal: 'alice' })
  const bob = await connect(t, pool, { session: 'b1', principal: 'bob' })
  await alice.callTool('create_entities', entity('alice-note'))
  t.match(graphOf(await bob.callTool('read_graph', {})), /alice-note/, 'bob\'s own child reads alice\'s entity from the shared file')
})

t.test('principal isolation with state_dir: each principal has its own folder and graph, on every session of theirs', async (t) => {
  const stateDir = join(base, 'by-principal')
  // The server's path as a config file gives it, relative to the working directory: which stays the upstream's.
  const relative = 'node_modules/@modelcontextprotocol/server-memory/dist/index.js'
  const { pool } = poolFor(t, { command: ['node', relative], isolation: 'principal', state_dir: stateDir, env: { MEMORY_FILE_PATH: '{state_dir}/memory.jsonl' } })
  const alice = await connect(t, pool, { session: 'a1', principal: 'alice@example.com' })
  const bob = await connect(t, pool, { session: 'b1', principal: 'bob@example.com' })
  await alice.callTool('create_entities', entity('alice-note'))
  await bob.callTool('create_entities', entity('bob-note'))
  const bobGraph = graphOf(await bob.callTool('read_graph', {}))
  t.match(bobGraph, /bob-note/, 'bob reads his own')
  t.notMatch(bobGraph, /alice-note/, 'and not alice\'s')
  t.notMatch(graphOf(await alice.callTool('read_graph', {})), /bob-note/, 'nor alice bob\'s')
  const folders = readdirSync(stateDir).sort()
  t.equal(folders.length, 2, 'one folder per principal')
  t.ok(folders.every((name) => /^principal-[0-9a-f]{32}$/.test(name)), `named by a hash, no principal's name on disk: ${folders.join(', ')}`)
  t.ok(folders.every((name) => readdirSync(join(stateDir, name)).includes('memory.jsonl')), 'each holds its own graph file')
  await pool.close()
  // The next generation (a reload, a restart, another worker) finds the principal's data again.
  const { pool: next } = poolFor(t, { command: ['node', memory], isolation: 'principal', state_dir: stateDir, env: { MEMORY_FILE_PATH: '{state_dir}/memory.jsonl' } })
  const aliceAgain = await connect(t, next, { session: 'a2', principal: 'alice@example.com' })
  t.match(graphOf(await aliceAgain.callTool('read_graph', {})), /alice-note/, 'alice\'s graph outlives the pool')
})

t.test('session isolation with state_dir: a session\'s folder is its own, and goes when the session ends', async (t) => {
  const stateDir = join(base, 'by-session')
  const { pool } = poolFor(t, { command: ['node', memory], isolation: 'session', state_dir: stateDir, env: { MEMORY_FILE_PATH: '{state_dir}/memory.jsonl' } })
  const one = await connect(t, pool, { session: 's1' })
  const two = await connect(t, pool, { session: 's2' })
  await one.callTool('create_entities', entity('first-session'))
  t.notMatch(graphOf(await two.callTool('read_graph', {})), /first-session/, 'the other session does not see it')
  t.equal(readdirSync(stateDir).filter((name) => /^session-[0-9a-f-]{36}$/.test(name)).length, 2, 'a folder per session')
  await one.close()
  await eventually(() => readdirSync(stateDir).length === 1, 10_000)
  t.pass('the ended session\'s folder is removed; the live one\'s stays')
})

t.test('state_dir is refused where it cannot hold, and {state_dir} without it', async (t) => {
  t.throws(() => resolveStdioUpstream({ name: 'm', command: ['node', memory], state_dir: base }, base), /state_dir needs isolation: principal or session/)
  t.throws(() => resolveStdioUpstream({ name: 'm', command: ['node', memory], isolation: 'session', env: { MEMORY_FILE_PATH: '{state_dir}/x' } }, base), /\{state_dir\} is used but state_dir is not set/)
})
