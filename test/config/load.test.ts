// A valid config comes back typed, defaulted, interpolated and normalised.
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { ConfigError, DEFAULT_CONFIG_FILE, configFromObject, loadConfig, type ConfigProblem } from '../../gateway/config/load.ts'
import { writeConfig } from './write-config.ts'


/** The problems of the ConfigError `fn` throws. */
function problemsFrom(fn: () => unknown): ConfigProblem[] {
  try {
    fn()
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
  throw new Error('expected a ConfigError, the config loaded')
}

const minimalRoute = { location: '/mcp', handler: 'echo.ts', server: { name: 'echo', version: '1.0.0' } }

t.test('defaults land everywhere', async (t) => {
  const file = writeConfig(t, 'routes:\n  - location: /mcp\n    handler: ./echo.ts\n    server: { name: echo, version: 1.0.0 }\n')
  const config = await loadConfig(file, {})
  const limits = { json_depth: 128, json_values: 100000, listen_streams_per_client: 16, listen_streams: 1024, legacy_sse_streams_per_client: 16, legacy_sse_streams: 1024, client_capabilities: 16384, client_info: 4096, subscriptions: 256, uri_length: 2048, hidden_components: 1024, batch_size: 32, roots_cache: 1024, session_state: 65536, session_catalogue: 65536, cache_bytes_per_route: 8388608, cache_bytes_total: 67108864, cache_entries_per_principal: 256 }
  t.same(config, {
    file,
    listen: { host: '127.0.0.1', port: 8080 },
    workers: 1,
    store: { type: 'memory', event_capacity: 1024, cache_ttl: 90, event_bytes: 8388608, event_bytes_total: 268435456, session_bytes_total: 268435456, session_bytes_per_principal: 16777216 },
    body_limit: 4194304,
    connections: { header_timeout: 60, body_timeout: 60, keepalive_timeout: 75 },
    limits,
    trust_proxy: false,
    drain_timeout: 10,
    request_state: { ttl: 600 },
    log: {
      level: 'info',
      buffer: 32768,
      flush_interval: 1,
      redact: {
        headers: ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'mcp-session-id', 'x-api-key'],
        query_params: ['token', 'key', 'secret', 'pass', 'pwd', 'auth', 'session', 'signature', 'sig', 'code', 'credential', 'jwt', 'bearer', 'refresh', 'otp', 'assertion', 'ticket'],
        paths: [],
      },
    },
    metrics: { enabled: true, path: '/metrics', allowed_hosts: [] },
    routes: [{
      location: '/mcp',
      handler: path.join(path.dirname(file), 'echo.ts'),
      transports: ['streamable_http'],
      server: { name: 'echo', version: '1.0.0' },
      capabilities: {
        logging: true,
        completions: true,
        prompts: { list_changed: true },
        resources: { subscribe: true, list_changed: true },
        tools: { list_changed: true },
      },
      pagination: { tools: 0, prompts: 0, resources: 0 },
      resumability: true,
      longest_standby: 600,
      read_timeout: 10,
      producer_timeout: 15,
      allowed_origins: [],
      max_sessions: 10000,
      max_followers: 16,
      send_buffer: { max_bytes: 1048576, max_messages: 1024 },
      cache: { ttl_ms: 0, scope: 'private' },
      list_cache: { ttl_s: 60, max_ttl_s: 3600 },
      result_cache: { scope: 'private' },
      tasks: { enabled: false, ttl: 3600, max_ttl: 86400, poll_interval: 1, max_result_bytes: 1048576, max_per_owner: 100 },
      websocket: { ping_interval: 30, max_message_size: 4194304, initialize_timeout: 10, idle_timeout: 600 },
      options: {},
      catalogue: 'full',
      search: { results: 8, max_results: 25, max_query: 500, max_loaded: 32, indexes: 16 },
      include: [],
      phases: {},
      filter: undefined,
      approval: undefined,
      rewrite: undefined,
      audit_arguments: false,
      upstreams: [],
      prefix: 'auto',
      separator: '__',
      tools: { deny: [], rename: {} },
      auth: undefined,
      scopes: { tools: {}, prompts: {}, resources: {}, resource_templates: {} },
      limits,
      quotas: { rate: [], sessions_per_principal: 100, concurrent_requests_per_session: 64 },
    }],
  })
  t.equal(config.routes[0]?.limits, config.limits, 'every route sees the gateway\'s limits')
})

t.test('explicit values are kept', async (t) => {
  const file = writeConfig(t, `listen: { host: 0.0.0.0, port: 0 }
workers: auto
store: { type: memory, event_capacity: 8, cache_ttl: 0.5 }
body_limit: 1024
log: { level: silent }
routes:
  - location: /mcp
    handler: h.ts
    transports: [websocket, streamable_http]
    server:
      name: echo
      version: '2'
      title: Echo
      website_url: https://example.com/echo
      icons: [{ src: https://example.com/i.png, sizes: [48x48], extra: kept }]
      instructions: Say hello.
    pagination: { tools: 5, prompts: 0, resources: 2 }
    resumability: false
    longest_standby: 1.5
    read_timeout: 3
    allowed_origins: [localhost:3000]
    max_sessions: 2
    options: { anything: [1, { goes: true }] }
`)
  const config = await loadConfig(file, {})
  t.match(config, {
    listen: { host: '0.0.0.0', port: 0 },
    workers: 'auto',
    store: { type: 'memory', event_capacity: 8, cache_ttl: 0.5, event_bytes: 8388608, event_bytes_total: 268435456, session_bytes_total: 268435456, session_bytes_per_principal: 16777216 },
    body_limit: 1024,
    log: { level: 'silent', buffer: 32768 },
  })
  const [route] = config.routes
  t.same(route?.transports, ['websocket', 'streamable_http'])
  t.same(route?.server.icons, [{ src: 'https://example.com/i.png', sizes: ['48x48'], extra: 'kept' }])
  t.same(route?.pagination, { tools: 5, prompts: 0, resources: 2 })
  t.match(route, { resumability: false, longest_standby: 1.5, read_timeout: 3, max_sessions: 2, allowed_origins: ['localhost:3000'] })
  t.same(route?.options, { anything: [1, { goes: true }] })
})

t.test('interpolation with and without defaults', async (t) => {
  const file = writeConfig(t, `listen:
  host: \${GW_HOST:-127.0.0.2}
  port: \${GW_PORT:-8080}
workers: \${GW_WORKERS:-auto}
routes:
  - location: /\${GW_PREFIX}/mcp
    handler: \${GW_HANDLERS:-./handlers}/echo.ts
    server: { name: "\${GW_NAME:-echo}", version: "\${GW_VERSION}" }
    resumability: \${GW_RESUME:-true}
    read_timeout: \${GW_TIMEOUT:-2.5}
    allowed_origins: ["http://\${GW_HOST:-localhost}:\${GW_PORT:-8080}", "literal $\${NOT_A_VAR}"]
    options: { token: "\${GW_TOKEN:-}" }
`)
  const config = await loadConfig(file, { GW_PORT: '9090', GW_PREFIX: 'v1', GW_VERSION: '1.2', GW_RESUME: 'false', GW_WORKERS: '' })
  t.same(config.listen, { host: '127.0.0.2', port: 9090 }, 'the port is a number, from env')
  t.equal(config.workers, 'auto', 'an empty variable takes the default')
  const [route] = config.routes
  t.equal(route?.location, '/v1/mcp')
  t.equal(route?.handler, path.join(path.dirname(file), 'handlers', 'echo.ts'))
  t.same(route?.server, { name: 'echo', version: '1.2' }, 'a number-like value stays a string where a string is wanted')
  t.equal(route?.resumability, false, 'booleans are coerced where the schema wants one')
  t.equal(route?.read_timeout, 2.5)
  t.same(route?.allowed_origins, ['http://localhost:9090', 'literal ${NOT_A_VAR}'], 'mixed text is never coerced; $${ escapes')
  t.same(route?.options, { token: '' })

  const defaults = await loadConfig(file, { GW_PREFIX: 'v2', GW_VERSION: '1' })
  t.same(defaults.listen, { host: '127.0.0.2', port: 8080 }, 'the default port is a number too')
  t.equal(defaults.routes[0]?.resumability, true)
})

t.test('interpolated values are coerced only where the schema wants a number or boolean', async (t) => {
  const file = writeConfig(t, 'workers: ${W}\nroutes:\n  - location: ${L}\n    handler: h.ts\n    server: { name: a, version: "1" }\n    max_sessions: ${M}\n')
  const config = await loadConfig(file, { W: '4', L: '/x', M: '12' })
  t.equal(config.workers, 4)
  t.equal(config.routes[0]?.max_sessions, 12)
  const err = await loadConfig(file, { W: 'lots', L: '5', M: '1.5' }).catch((e: unknown) => e)
  t.ok(err instanceof ConfigError)
  t.match((err as ConfigError).problems, [
    { line: 1, path: 'workers', message: 'must be an integer or "auto" (found string "lots")' },
    { line: 3, path: 'routes[0].location', message: 'must start with "/" (found string "5")' },
    { line: 6, path: 'routes[0].max_sessions', message: 'must be an integer (found number 1.5)' },
  ])
})

t.test('bad references are errors, and do not also fail the schema', async (t) => {
  const file = writeConfig(t, 'listen:\n  port: ${PORT\nroutes:\n  - location: /mcp\n    handler: ${1BAD}\n    server: { name: a, version: "1" }\n')
  const err = await loadConfig(file, {}).catch((e: unknown) => e)
  t.ok(err instanceof ConfigError)
  t.match((err as ConfigError).problems, [
    { line: 2, path: 'listen.port', message: /^unterminated "\$\{"/ },
    { line: 5, path: 'routes[0].handler', message: /^bad variable reference "\$\{1BAD\}"/ },
  ])
  t.equal((err as ConfigError).problems.length, 2)
})

t.test('relative handler paths resolve against the config folder; absolute ones stay', async (t) => {
  const absolute = path.join(tmpdir(), 'elsewhere', 'h.ts')
  const file = writeConfig(t, `routes:
  - { location: /a, handler: ../handlers/echo.ts, server: { name: a, version: "1" } }
  - { location: /b, handler: ${JSON.stringify(absolute)}, server: { name: b, version: "1" } }
  - { location: /c, handler: sub/./c.ts, server: { name: c, version: "1" } }
`)
  const config = await loadConfig(file, {})
  const folder = path.dirname(file)
  t.same(config.routes.map((r) => r.handler), [
    path.resolve(folder, '../handlers/echo.ts'),
    absolute,
    path.join(folder, 'sub', 'c.ts'),
  ])
  t.equal(config.file, file)
})

t.test('capabilities normalisation', async (t) => {
  const caps = (capabilities: unknown) => configFromObject({ routes: [{ ...minimalRoute, capabilities }] }, '<embedded>', {}).routes[0]?.capabilities
  t.same(caps({}), {
    logging: true, completions: true,
    prompts: { list_changed: true }, resources: { subscribe: true, list_changed: true }, tools: { list_changed: true },
  })
  t.same(caps({ logging: false, completions: false, prompts: false, resources: false, tools: false }), {
    logging: false, completions: false, prompts: false, resources: false, tools: false,
  })
  t.same(caps({ prompts: true, tools: { list_changed: false }, resources: { subscribe: false } }), {
    logging: true, completions: true,
    prompts: { list_changed: true }, tools: { list_changed: false }, resources: { subscribe: false, list_changed: true },
  })
  t.same(caps({ tools: {}, resources: { list_changed: false } }), {
    logging: true, completions: true,
    prompts: { list_changed: true }, tools: { list_changed: true }, resources: { subscribe: true, list_changed: false },
  })
  t.match(problemsFrom(() => caps({ tools: 'yes' })), [{ path: 'routes[0].capabilities.tools', message: 'must be true or false or a mapping (found string "yes")' }])
  t.match(problemsFrom(() => caps({ resources: { subscribe: true, watch: true } })), [{ path: 'routes[0].capabilities.resources', message: 'unknown key "watch"' }])
})

t.test('configFromObject validates like a file, without positions, and leaves its input alone', async (t) => {
  const doc = { listen: { port: '${P}' }, routes: [{ ...minimalRoute, handler: '/abs/h.ts' }] }
  const before = structuredClone(doc)
  const config = configFromObject(doc, undefined, { P: '1234' })
  t.same(doc, before, 'input not mutated (no defaults, no interpolation written back)')
  t.equal(config.file, '<embedded>')
  t.equal(config.listen.port, 1234)
  t.equal(config.routes[0]?.handler, '/abs/h.ts')
  t.equal(configFromObject({ routes: [minimalRoute] }, undefined, {}).routes[0]?.handler, path.resolve('echo.ts'), 'relative to cwd')

  const problems = problemsFrom(() => configFromObject({ routes: [{ ...minimalRoute, pagination: { tools: -1 } }], extra: 1 }, 'built-in', {}))
  t.same(problems, [
    { file: 'built-in', path: '', message: 'unknown key "extra"' },
    { file: 'built-in', path: 'routes[0].pagination.tools', message: 'must be >= 0 (found number -1)' },
  ])
  t.equal(new ConfigError(problems).formatProblems(), 'built-in: unknown key "extra"\nbuilt-in: routes[0].pagination.tools: must be >= 0 (found number -1)')
  t.equal(configFromObject({ routes: [minimalRoute] }, 'conf/x.yaml', {}).file, path.resolve('conf/x.yaml'))
})

t.test('positions survive quoting, flow style, anchors and merge keys', async (t) => {
  const file = writeConfig(t, `defaults: &d { read_timeout: -1 }
routes:
  - "location": /a
    handler: a.ts
    server: { name: a, version: "1" }
    <<: *d
`)
  const err = await loadConfig(file, {}).catch((e: unknown) => e)
  t.ok(err instanceof ConfigError)
  t.same((err as ConfigError).problems.map((p) => [p.line, p.column, p.path, p.message]), [
    [1, 1, '', 'unknown key "defaults"'],
    [6, 5, 'routes[0].read_timeout', 'must be > 0 (found number -1)'],
  ])
})

t.test('DEFAULT_CONFIG_FILE is config/gateway.yaml, relative to the working directory', async (t) => {
  t.notOk(path.isAbsolute(DEFAULT_CONFIG_FILE))
  t.equal(DEFAULT_CONFIG_FILE, 'config/gateway.yaml')
})

t.test('limits: gateway-level defaults, replaced key by key by a route (a rate list as a whole)', async (t) => {
  const file = writeConfig(t, `limits:
  rate: [{ key: ip, limit: 600, window: 60 }]
  sessions_per_principal: 50
routes:
  - { location: /a, handler: a.ts, server: { name: a, version: '1' } }
  - location: /b
    handler: b.ts
    server: { name: b, version: '1' }
    limits:
      rate: [{ key: principal, tool: 'deploy*', limit: 5, window: 60 }]
      concurrent_requests_per_session: 0
`)
  const config = await loadConfig(file, {})
  t.same(config.routes[0]!.quotas, { rate: [{ key: 'ip', limit: 600, window: 60 }], sessions_per_principal: 50, concurrent_requests_per_session: 64 })
  t.same(config.routes[1]!.quotas, { rate: [{ key: 'principal', tool: 'deploy*', limit: 5, window: 60 }], sessions_per_principal: 50, concurrent_requests_per_session: 0 })
  const bad = writeConfig(t, `routes:\n  - location: /a\n    handler: a.ts\n    server: { name: a, version: '1' }\n    limits: { rate: [{ key: user, limit: 0, window: 60 }] }\n`)
  await t.rejects(loadConfig(bad, {}), /key|limit/, 'an unknown key kind or a zero limit is a config error')
})
