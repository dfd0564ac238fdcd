/**
 * `mcp-edge start|check|stdio|init [--config FILE]`.
 *   start  serves the config (PORT and HOST from the environment override `listen`).
 *   check  loads the config, every handler module, and each route's access phase (its JWT settings,
 *          API keys file and access module), prints `ok` or every problem; exit 0 or 2
 *          (like `nginx -t`).
 *   stdio  serves one route (`--route LOCATION`) over stdin/stdout, one session, until stdin ends;
 *          logs go to stderr.
 *   init   scaffolds a project in DIR (default: the working directory); see init/scaffold.ts.
 *   reload asks the gateway serving that config to reload (SIGHUP) and prints the outcome.
 *   oauth-revoke ends one principal's per-user OAuth grant to one upstream (revoke-command.ts).
 */
import cluster from 'node:cluster'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { openRouteWarning } from './edge/exposure.ts'
import { RouteAccess } from './edge/route-access.ts'
import { needsPrimary, startCluster } from './server/cluster.ts'
import { requestStateKeyVerdict } from './server/request-state-key.ts'
import { ConfigError, DEFAULT_CONFIG_FILE, formatProblems, loadConfig } from './config/load.ts'
import { applyListenEnv } from './config/listen-env.ts'
import type { GatewayConfig } from './config/types.ts'
import { scaffold } from './init/scaffold.ts'
import { revokeGrant } from './upstream/credentials/oauth/revoke-command.ts'
import { codecFromConfig } from './protocol/stateless/request-state.ts'
import { buildEndpoint, setupFailure } from './server/route-endpoint.ts'
import { CredentialContext } from './upstream/credentials/context.ts'
import { requestReload } from './server/reload.ts'
import { loadHandlers } from './server/server.ts'
import { loadCatalog, unreachable } from './upstream/openapi/catalog.ts'
import { Naming } from './upstream/names.ts'
import { runSingleProcess } from './server/single-process.ts'
import { createLogger } from './log/logger.ts'
import { serveRouteOverStdio, StdioStartError } from './server/stdio.ts'
import { MemoryStore } from './store/memory.ts'

const USAGE = `usage: mcp-edge <command> [--config FILE] [--route LOCATION]

commands:
  start   serve the gateway (default config: ./config/gateway.yaml; PORT and HOST override listen)
  check   validate the config and load every handler module; prints ok or every problem;
          an openapi upstream's document is loaded, its tools listed and its API reached
          (--offline: not reached; what a reload runs)
  reload  check the config and handlers, then have the running gateway reload them (like
          nginx -s reload); prints the outcome; exit 0, or 2 when nothing changed;
          start --watch does the same whenever the config or a handler's folder changes
  init    scaffold a project in DIR (default: .): config/gateway.yaml, handlers/hello.ts,
          tsconfig.json, package.json scripts, Dockerfile; existing files are kept
  stdio   serve one route over stdin/stdout as newline-delimited JSON (--route LOCATION, optional
          when the config has one route); logs go to stderr; exits when stdin ends
  oauth-revoke --principal P --upstream NAME [--route LOCATION]
          end a principal's per-user OAuth grant to an upstream (auth.oauth): revoked at the
          authorization server when it can, forgotten by the store; exit 0, or 2 when none was held
`

const EXIT_OK = 0
const EXIT_USAGE = 1
const EXIT_INVALID = 2

/** Runs the CLI; resolves to the exit code (start resolves once the gateway listens). */
export async function main(argv: string[]): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { config: { type: 'string', short: 'c' }, route: { type: 'string', short: 'r' }, principal: { type: 'string' }, upstream: { type: 'string' }, watch: { type: 'boolean', short: 'w' }, offline: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } })
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`)
    return EXIT_USAGE
  }
  const [command] = parsed.positionals
  if (parsed.values.help) {
    process.stdout.write(USAGE)
    return EXIT_OK
  }
  if (command === undefined) {
    process.stderr.write(`missing command\n${USAGE}`)
    return EXIT_USAGE
  }
  if (command === 'init') return scaffold(parsed.positionals[1] ?? '.')
  const file = path.resolve(parsed.values.config ?? DEFAULT_CONFIG_FILE)
  switch (command) {
    case 'check':
      return check(file, parsed.values.offline === true)
    case 'start':
      return start(file, parsed.values.watch === true)
    case 'reload':
      return reload(file)
    case 'stdio':
      return stdio(file, parsed.values.route)
    case 'oauth-revoke':
      return oauthRevoke(file, parsed.values.principal, parsed.values.upstream, parsed.values.route)
    default:
      process.stderr.write(`unknown command: ${command}\n${USAGE}`)
      return EXIT_USAGE
  }
}

async function oauthRevoke(file: string, principal: string | undefined, upstream: string | undefined, route: string | undefined): Promise<number> {
  if (principal === undefined || upstream === undefined) {
    process.stderr.write(`oauth-revoke needs --principal and --upstream\n${USAGE}`)
    return EXIT_USAGE
  }
  const config = await readConfig(file)
  if (config === undefined) return EXIT_INVALID
  try {
    const revoked = await revokeGrant(config, route === undefined ? { principal, upstream } : { principal, upstream, route }, pino({ level: 'warn' }, pino.destination(2)))
    if (revoked === undefined) {
      process.stderr.write(`no upstream named ${upstream} with auth.oauth${route === undefined ? '' : ` in route ${route}`}\n`)
      return EXIT_INVALID
    }
    process.stdout.write(revoked > 0 ? `revoked: ${principal} at ${upstream}\n` : `nothing to revoke: ${principal} holds no token for ${upstream}\n`)
    return revoked > 0 ? EXIT_OK : EXIT_INVALID
  } catch (error) {
    process.stderr.write(`oauth-revoke failed: ${(error as Error).message}\n`)
    return EXIT_INVALID
  }
}

async function readConfig(file: string): Promise<GatewayConfig | undefined> {
  try {
    return await loadConfig(file)
  } catch (error) {
    if (error instanceof ConfigError) process.stderr.write(`${formatProblems(error.problems)}\n`)
    else process.stderr.write(`${file}: ${(error as Error).message}\n`)
    return undefined
  }
}

async function check(file: string, offline = false): Promise<number> {
  const config = await readConfig(file)
  if (config === undefined) return EXIT_INVALID
  const { handlers, problems } = await loadHandlers(config.routes)
  // Run each setup too, as start would, so a component the registry refuses (a bad tool name, an
  // invalid schema) is found here; against a throwaway store, with nothing listening.
  const store = new MemoryStore({ eventCapacity: 1, cacheTtl: 1 })
  const logger = pino({ level: 'silent' })
  const codec = codecFromConfig(config.request_state)
  let tools = 0
  // REST APIs first: their documents' problems (and the tools they would list) in their own words.
  const openapi = await checkOpenApi(config, offline)
  problems.push(...openapi.problems)
  tools += openapi.tools
  for (const route of config.routes) {
    const handler = handlers.get(route.location)
    if (handler === undefined || openapi.failed.has(route.location)) continue
    try {
      // The upstreams' credentials are set up too (key and secret files read), against nothing shared.
      const credentials = new CredentialContext(logger, { upstream_identity: config.upstream_identity, token_encryption: config.token_encryption })
      const endpoint = await buildEndpoint(route, handler, store, logger, codec, undefined, credentials)
      tools += endpoint.registry.toolCount
      endpoint.close()
    } catch (error) {
      problems.push(setupFailure(route, (error as Error).message))
    }
  }
  await store.close()
  for (const route of config.routes) {
    for (const problem of await RouteAccess.problems(route)) problems.push(`route ${route.location}: auth: ${problem}`)
  }
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`)
    return EXIT_INVALID
  }
  const routes = config.routes.length
  for (const line of openapi.listing) process.stdout.write(`${line}\n`)
  process.stdout.write(`ok: ${config.file} (${routes} route${routes === 1 ? '' : 's'}, ${tools} tool${tools === 1 ? '' : 's'})\n`)
  return EXIT_OK
}

/**
 * Every openapi upstream's document loaded and its tools built (what the route would list, under
 * their exposed names), and, unless `offline`, its API reached with one TCP connection.
 */
async function checkOpenApi(config: GatewayConfig, offline: boolean): Promise<{ problems: string[]; listing: string[]; failed: Set<string>; tools: number }> {
  let tools = 0
  const problems: string[] = []
  const listing: string[] = []
  const failed = new Set<string>()
  for (const route of config.routes) {
    const naming = new Naming(route, route.upstreams.map((upstream) => upstream.name))
    for (const upstream of route.upstreams) {
      if (upstream.openapi === undefined) continue
      const where = `route ${route.location}: upstream ${upstream.name} (openapi)`
      const outcome = await loadCatalog(upstream.openapi)
      if ('problems' in outcome) {
        failed.add(route.location)
        for (const problem of outcome.problems) problems.push(`${where}: ${problem}`)
        continue
      }
      const { catalog } = outcome
      for (const problem of catalog.compileAll()) problems.push(`${where}: ${problem}`)
      if (!offline) {
        const why = await unreachable(catalog.base, Math.min(5000, (upstream.timeout ?? route.read_timeout) * 1000))
        if (why !== undefined) problems.push(`${where}: the API at ${catalog.base.origin} cannot be reached (${why}); check openapi.base_url (or the document's servers), or run check --offline`)
      }
      tools += catalog.byName.size
      const names = [...catalog.byName.values()].map((tool) => `  ${naming.tool(upstream.name, tool.name) ?? `(hidden by tools.allow/deny) ${tool.name}`}  ${tool.method} ${tool.path}`)
      listing.push(`${where}: ${names.length} tool${names.length === 1 ? '' : 's'} at ${catalog.base.origin}${catalog.base.pathname.replace(/\/$/, '')}`, ...names)
      for (const skipped of catalog.skipped) listing.push(`  left out: ${skipped}`)
    }
  }
  return { problems, listing, failed, tools }
}

async function start(file: string, watch: boolean): Promise<number> {
  const config = await readConfig(file)
  if (config === undefined) return EXIT_INVALID
  const envProblem = applyListenEnv(config)
  if (envProblem !== undefined) {
    process.stderr.write(`mcp-edge: cannot start: ${envProblem}\n`)
    return EXIT_INVALID
  }
  const exposed = openRouteWarning(config)
  // Once per start: the primary warns, its workers (which run this same command) do not.
  if (exposed !== undefined && cluster.isPrimary) {
    // Synchronous: one line, before anything else is logged.
    createLogger({ ...config.log, buffer: 0 }).warn({ host: exposed.host, routes: exposed.routes }, exposed.message)
  }
  const key = cluster.isPrimary ? requestStateKeyVerdict(config) : undefined
  if (key !== undefined && 'refuse' in key) {
    process.stderr.write(`mcp-edge: cannot start: ${key.refuse}\n`)
    return EXIT_INVALID
  }
  if (key !== undefined) createLogger({ ...config.log, buffer: 0 }).warn({ store: config.store.type, workers: config.workers }, key.warn)
  if (needsPrimary(config)) {
    return startCluster(config, { watch }).then(() => EXIT_OK, (error: unknown) => {
      process.stderr.write(`mcp-edge: cannot start: ${(error as Error).message}\n`)
      return EXIT_INVALID
    })
  }
  try {
    // A reload applies PORT and HOST to the config it reads again, as here.
    const { url, logger } = await runSingleProcess(config, { watch, override: (next) => void applyListenEnv(next) })
    logger.info({ url, config: config.file, routes: config.routes.map((route) => route.location) }, 'mcp-edge listening')
  } catch (error) {
    process.stderr.write(`mcp-edge: cannot start: ${(error as Error).message}\n`)
    return EXIT_INVALID
  }
  return EXIT_OK
}

async function reload(file: string): Promise<number> {
  const outcome = await requestReload(file)
  if (typeof outcome === 'string') {
    process.stderr.write(`mcp-edge reload: ${outcome}\n`)
    return EXIT_INVALID
  }
  if (!outcome.ok) {
    process.stderr.write(`mcp-edge reload: refused; the gateway keeps serving what it served:\n${outcome.problems.join('\n')}\n`)
    return EXIT_INVALID
  }
  process.stdout.write(`reloaded: ${outcome.detail ?? 'ok'}\n`)
  return EXIT_OK
}

async function stdio(file: string, location: string | undefined): Promise<number> {
  const config = await readConfig(file)
  if (config === undefined) return EXIT_INVALID
  const routes = config.routes
  const route = location === undefined ? (routes.length === 1 ? routes[0] : undefined) : routes.find((r) => r.location === location)
  if (route === undefined) {
    const known = routes.map((r) => r.location).join(', ')
    process.stderr.write(location === undefined ? `stdio: --route is required (routes: ${known})\n` : `stdio: no route ${location} (routes: ${known})\n`)
    return EXIT_USAGE
  }
  try {
    await serveRouteOverStdio(config, route)
  } catch (error) {
    if (!(error instanceof StdioStartError)) throw error
    process.stderr.write(`mcp-edge: ${error.message}\n`)
    return EXIT_INVALID
  }
  return EXIT_OK
}
