// Every class of config mistake is reported with its file, line, column and a message naming it.
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { ConfigError, formatProblems, loadConfig, type ConfigProblem } from '../../gateway/config/load.ts'
import { writeConfig, type Teardown } from './write-config.ts'

/** Loads `text` expecting a ConfigError; returns its problems. */
async function problemsOf(t: Teardown, text: string, env: Record<string, string> = {}): Promise<{ file: string; problems: ConfigProblem[] }> {
  const file = writeConfig(t, text)
  const err = await loadConfig(file, env).then(() => new Error('expected a ConfigError, the config loaded'), (e: unknown) => e)
  if (!(err instanceof ConfigError)) throw err
  return { file, problems: err.problems }
}

const route = (extra = '') => `routes:
  - location: /mcp
    handler: ./echo.ts
    server: { name: echo, version: 1.0.0 }
${extra}`

t.test('YAML syntax error reports js-yaml mark and reason', async (t) => {
  const { file, problems } = await problemsOf(t, 'listen:\n  port: [1, 2\nworkers: 1\n')
  t.equal(problems.length, 1)
  const [p] = problems
  t.match(p, { file, line: 3, column: 1, path: '' })
  t.ok(p?.message, 'carries the reason')
  t.equal(formatProblems(problems), `${file}:3:1: ${p?.message}`)
})

t.test('duplicate YAML key is a syntax error at its line', async (t) => {
  const { problems } = await problemsOf(t, `listen:\n  port: 1\n  port: 2\n${route()}`)
  t.match(problems, [{ line: 3, message: /duplicated mapping key/ }])
})

t.test('unknown key at top level points at the key', async (t) => {
  const { file, problems } = await problemsOf(t, `lisen:\n  port: 1\n${route()}`)
  t.same(problems, [{ file, line: 1, column: 1, path: '', message: 'unknown key "lisen"' }])
  t.equal(formatProblems(problems), `${file}:1:1: unknown key "lisen"`)
})

t.test('unknown key inside a route points at the key', async (t) => {
  const { file, problems } = await problemsOf(t, route('    pagnation: { tools: 1 }\n'))
  t.same(problems, [{ file, line: 5, column: 5, path: 'routes[0]', message: 'unknown key "pagnation"' }])
})

t.test('wrong type names the expected and found types', async (t) => {
  const { file, problems } = await problemsOf(t, `listen:\n  port: eighty\n${route('    resumability: yes\n')}`)
  t.match(problems, [
    { file, line: 2, column: 3, path: 'listen.port', message: /^must be an integer \(found string "eighty"\)$/ },
    { file, line: 7, column: 5, path: 'routes[0].resumability', message: /^must be true or false/ },
  ])
})

t.test('an unquoted version that YAML reads as a number suggests quoting', async (t) => {
  const { problems } = await problemsOf(t, 'routes:\n  - location: /mcp\n    handler: h.ts\n    server:\n      name: x\n      version: 1.0\n')
  t.match(problems, [{ line: 6, column: 7, path: 'routes[0].server.version', message: /must be a string.*quote it/ }])
})

t.test('out-of-range numbers', async (t) => {
  const { file, problems } = await problemsOf(t, `listen: { port: 70000 }\n${route('    pagination:\n      tools: -1\n    read_timeout: 0\n')}`)
  t.match(problems, [
    { line: 1, column: 11, path: 'listen.port', message: /^must be <= 65535/ },
    { line: 7, column: 7, path: 'routes[0].pagination.tools', message: /^must be >= 0/ },
    { line: 8, column: 5, path: 'routes[0].read_timeout', message: /^must be > 0/ },
  ])
  t.match(formatProblems(problems).split('\n')[1], `${file}:7:7: routes[0].pagination.tools: must be >= 0`)
})

t.test('missing required keys point at the parent', async (t) => {
  const { problems } = await problemsOf(t, 'workers: 2\nroutes:\n  - location: /a\n    server:\n      name: a\n')
  t.same(problems.map((p) => [p.line, p.column, p.path, p.message]), [
    [3, 5, 'routes[0]', 'missing required key "handler"'],
    [4, 5, 'routes[0].server', 'missing required key "version"'],
  ])
  const top = await problemsOf(t, 'workers: 2\n')
  t.same(top.problems.map((p) => [p.line, p.column, p.path, p.message]), [[1, 1, '', 'missing required key "routes"']])
})

t.test('duplicate route location points at the second one', async (t) => {
  const { problems } = await problemsOf(t, `${route()}  - location: /other
    handler: b.ts
    server: { name: b, version: '1' }
  - handler: c.ts
    location: /mcp
    server: { name: c, version: '1' }
`)
  t.same(problems.map((p) => [p.line, p.column, p.path, p.message]), [[9, 5, 'routes[2].location', 'duplicate location "/mcp" (also routes[0])']])
})

t.test('unset env var without default names the variable and its line', async (t) => {
  const { file, problems } = await problemsOf(t, `listen:\n  host: \${GW_HOST}\n  port: \${GW_PORT}\n${route()}`, { GW_PORT: '9000' })
  t.same(problems, [{
    file, line: 2, column: 3, path: 'listen.host',
    message: 'environment variable GW_HOST is not set and has no default (write ${GW_HOST:-default} to give one)',
  }])
})

t.test('bad enum in transports points at the item', async (t) => {
  const { problems } = await problemsOf(t, route('    transports: [streamable_http, stdio]\n'))
  t.match(problems, [{ line: 5, column: 35, path: 'routes[0].transports[1]', message: 'must be one of "streamable_http", "websocket", "sse" (found string "stdio")' }])
})

t.test('duplicate and empty transports', async (t) => {
  const { problems } = await problemsOf(t, `${route('    transports:\n      - websocket\n      - websocket\n')}  - location: /b
    handler: b.ts
    server: { name: b, version: '1' }
    transports: []
`)
  t.match(problems, [
    { line: 7, column: 9, path: 'routes[0].transports[1]', message: 'duplicate item "websocket"' },
    { line: 11, column: 5, path: 'routes[1].transports', message: 'must have at least 1 item' },
  ])
})

t.test('location must start with a slash; workers must be a positive integer or auto', async (t) => {
  const { problems } = await problemsOf(t, 'workers: many\nroutes:\n  - location: mcp\n    handler: h.ts\n    server: { name: a, version: "1" }\n')
  t.match(problems, [
    { line: 1, path: 'workers', message: 'must be an integer or "auto" (found string "many")' },
    { line: 3, column: 5, path: 'routes[0].location', message: /^must start with "\/"/ },
  ])
  const zero = await problemsOf(t, `workers: 0\n${route()}`)
  t.match(zero.problems, [{ path: 'workers', message: /^must be >= 1/ }])
})

t.test('all problems are reported at once, in file order', async (t) => {
  const { problems } = await problemsOf(t, `log: { level: loud }\nbogus: 1\n${route('    max_sessions: 0\n    capabilities: { tools: { listchanged: true } }\n')}`)
  t.same(problems.map((p) => p.line), [1, 2, 7, 8])
  t.match(problems, [
    { path: 'log.level', message: /must be one of "trace"/ },
    { message: 'unknown key "bogus"' },
    { path: 'routes[0].max_sessions', message: /^must be >= 1/ },
    { path: 'routes[0].capabilities.tools', message: 'unknown key "listchanged"' },
  ])
})

t.test('unknown store backend and unknown store key', async (t) => {
  const { problems } = await problemsOf(t, `store:\n  type: memory\n  capacity: 10\n${route()}`)
  t.match(problems, [{ line: 3, column: 3, path: 'store', message: 'unknown key "capacity"' }])
  const other = await problemsOf(t, `store: { type: etcd }\n${route()}`)
  t.match(other.problems, [{ line: 1, path: 'store.type', message: /^must be one of "memory"/ }])
})

t.test('empty file, several documents, unreadable file', async (t) => {
  const empty = await problemsOf(t, '# nothing here\n')
  t.match(empty.problems, [{ line: 1, message: /empty/ }])
  const many = await problemsOf(t, `${route()}---\n${route()}`)
  t.match(many.problems, [{ message: 'expected one YAML document, found 2' }])
  const missing = path.join(tmpdir(), 'mcp-edge-no-such-dir', 'gateway.yaml')
  await t.rejects(loadConfig(missing), { code: 'MCP_EDGE_CONFIG_INVALID', problems: [{ file: missing, message: /cannot read/ }] })
})

t.test('ConfigError carries its code, status and a message listing every problem', async (t) => {
  const { file, problems } = await problemsOf(t, `a: 1\nb: 2\n${route()}`)
  const err = new ConfigError(problems)
  t.equal(err.code, 'MCP_EDGE_CONFIG_INVALID')
  t.equal(err.status, 500)
  t.equal(err.name, 'ConfigError')
  t.equal(err.message, `invalid configuration (2 problems):\n${file}:1:1: unknown key "a"\n${file}:2:1: unknown key "b"`)
  t.equal(err.formatProblems(), formatProblems(problems))
})
