/**
 * `mcp-edge start|check [--config FILE]`.
 *   start  serves the config (PORT and HOST from the environment override `listen`).
 *   check  loads the config and every handler module, prints `ok` or every problem; exit 0 or 2
 *          (like `nginx -t`).
 */
import { parseArgs } from 'node:util'
import { ConfigError, DEFAULT_CONFIG_FILE, formatProblems, loadConfig } from './config/load.ts'
import type { GatewayConfig } from './config/types.ts'
import { loadHandlers, startGateway } from './server.ts'

const USAGE = `usage: mcp-edge <command> [--config FILE]

commands:
  start   serve the gateway (default config: config/gateway.yaml; PORT and HOST override listen)
  check   validate the config and load every handler module; prints ok or every problem
`

const EXIT_OK = 0
const EXIT_USAGE = 1
const EXIT_INVALID = 2

/** Runs the CLI; resolves to the exit code (start resolves once the gateway listens). */
export async function main(argv: string[]): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } })
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`)
    return EXIT_USAGE
  }
  const [command] = parsed.positionals
  if (parsed.values.help || command === undefined) {
    process.stdout.write(USAGE)
    return parsed.values.help ? EXIT_OK : EXIT_USAGE
  }
  const file = parsed.values.config ?? DEFAULT_CONFIG_FILE
  switch (command) {
    case 'check':
      return check(file)
    case 'start':
      return start(file)
    default:
      process.stderr.write(`unknown command: ${command}\n${USAGE}`)
      return EXIT_USAGE
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

async function check(file: string): Promise<number> {
  const config = await readConfig(file)
  if (config === undefined) return EXIT_INVALID
  const { problems } = await loadHandlers(config.routes)
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`)
    return EXIT_INVALID
  }
  process.stdout.write('ok\n')
  return EXIT_OK
}

async function start(file: string): Promise<number> {
  const config = await readConfig(file)
  if (config === undefined) return EXIT_INVALID
  if (process.env.PORT !== undefined) config.listen.port = Number(process.env.PORT)
  if (process.env.HOST !== undefined) config.listen.host = process.env.HOST
  let gateway
  try {
    gateway = await startGateway(config)
  } catch (error) {
    process.stderr.write(`mcp-edge: cannot start: ${(error as Error).message}\n`)
    return EXIT_INVALID
  }
  gateway.app.log.info({ url: gateway.url, routes: config.routes.map((route) => route.location) }, 'mcp-edge listening')
  const stop = (signal: string): void => {
    gateway.app.log.info({ signal }, 'shutting down')
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
  return EXIT_OK
}
