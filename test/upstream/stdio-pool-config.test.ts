// A stdio upstream's config: a command string split like a shell would (with no shell), defaults
// by isolation, paths resolved against the config's folder, and an environment without secrets.
import t from 'tap'
import { STDIO_POOL_DEFAULTS, resolveStdioUpstream, splitCommand } from '../../gateway/upstream/stdio-pool-config.ts'

t.test('splitCommand splits words like a POSIX shell and refuses shell syntax', async (t) => {
  t.same(splitCommand('npx -y @modelcontextprotocol/server-everything'), ['npx', '-y', '@modelcontextprotocol/server-everything'])
  t.same(splitCommand(`  python  -m "my server"  'a b'  c\\ d  `), ['python', '-m', 'my server', 'a b', 'c d'])
  t.same(splitCommand(`tool --name="x y" --q='it"s' ""`), ['tool', '--name=x y', `--q=it"s`, ''])
  t.same(splitCommand(`echo "a \\"b\\" \\$HOME \\n"`), ['echo', 'a "b" $HOME \\n'], 'inside "…" only " \\ $ ` are escaped')
  t.same(splitCommand(`run '|' "a;b" \\>`), ['run', '|', 'a;b', '>'], 'quoted operators are plain characters')
  for (const bad of ['a | b', 'a; b', 'a > out', 'a && b', 'echo $HOME', 'echo `id`', 'a (b)']) {
    t.throws(() => splitCommand(bad), /shell syntax and no shell runs the command/, bad)
  }
  t.throws(() => splitCommand(`a 'b`), /unterminated '/)
  t.throws(() => splitCommand(`a "b`), /unterminated "/)
  t.throws(() => splitCommand(`a \\`), /trailing/)
})

t.test('resolveStdioUpstream: defaults, paths, node, environment', async (t) => {
  process.env.MCP_EDGE_TEST_SECRET = 'do-not-pass'
  t.teardown(() => delete process.env.MCP_EDGE_TEST_SECRET)
  const shared = resolveStdioUpstream({ name: 'docs', command: 'node ./server.js --flag', env: { LOG_LEVEL: 'info' } }, '/etc/mcp-edge')
  t.equal(shared.command[0], process.execPath, '`node` is the gateway\'s own Node')
  t.same(shared.command.slice(1), ['./server.js', '--flag'])
  t.equal(shared.cwd, '/etc/mcp-edge', 'cwd defaults to the config file\'s folder')
  t.same(shared.pool, { min: 0, max: STDIO_POOL_DEFAULTS.maxShared, idle_timeout: 300, ping_interval: 30, ping_timeout: 10, start_timeout: 30 })
  t.equal(shared.isolation, 'shared')
  t.equal(shared.max_message_size, 4 * 1024 * 1024)
  t.equal(shared.env.LOG_LEVEL, 'info')
  t.equal(shared.env.PATH, process.env.PATH, 'PATH is passed')
  t.notOk('MCP_EDGE_TEST_SECRET' in shared.env, 'the gateway\'s other variables are not')

  const session = resolveStdioUpstream({ name: 'b', command: ['../bin/server', 'stdio'], cwd: 'servers', isolation: 'session', pool: { idle_timeout: 60 } }, '/etc/mcp-edge')
  t.equal(session.cwd, '/etc/mcp-edge/servers')
  t.equal(session.command[0], '/etc/mcp-edge/bin/server', 'a relative program path is resolved against cwd')
  t.equal(session.pool.max, STDIO_POOL_DEFAULTS.maxPerKey)
  t.equal(session.pool.idle_timeout, 60)

  t.throws(() => resolveStdioUpstream({ name: 'c', command: '' }, '/'), /command is empty/)
  t.throws(() => resolveStdioUpstream({ name: 'c', command: 'x', pool: { min: 3, max: 2 } }, '/'), /pool.min \(3\) is above pool.max \(2\)/)
  t.throws(() => resolveStdioUpstream({ name: 'c', command: 'x', isolation: 'session', pool: { min: 1 } }, '/'), /isolation: shared only/)
})

t.test('roots: folders become file:// URIs (relative to cwd), URIs stay as they are, absent means none', async (t) => {
  const withRoots = resolveStdioUpstream({ name: 'fs', command: 'x', cwd: 'data', roots: ['public', '/srv/shared dir', 'file:///already/a/uri'] }, '/etc/mcp-edge')
  t.same(withRoots.roots, [
    { uri: 'file:///etc/mcp-edge/data/public', name: '/etc/mcp-edge/data/public' },
    { uri: 'file:///srv/shared%20dir', name: '/srv/shared dir' },
    { uri: 'file:///already/a/uri' },
  ])
  t.equal(resolveStdioUpstream({ name: 'fs', command: 'x' }, '/').roots, undefined, 'no roots unless configured')
})
