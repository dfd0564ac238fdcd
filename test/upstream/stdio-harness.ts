// Pools of real child processes for the stdio pool's tests: the echo fixture (or any command),
// a pino log captured in memory, clients over the pool; everything is closed at teardown.
import { readFileSync } from 'node:fs'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { McpClient, type InitializeOptions } from '../../gateway/client/index.ts'
import { resolveStdioUpstream, type StdioUpstreamInput } from '../../gateway/upstream/stdio-pool-config.ts'
import { StdioPool, type StdioPoolKey, type StdioPoolOptions } from '../../gateway/upstream/stdio-pool.ts'

export { eventually } from '../fixtures/waiting.ts'

export const echoServer = fileURLToPath(new URL('./fixtures/echo-server.mjs', import.meta.url))
export { everythingServer } from '../fixtures/everything-server.ts'

interface Teardown { teardown(fn: () => unknown): void }

export interface LogLine { level: number; msg?: string; upstream?: string; childPid?: number; stderr?: string; truncated?: boolean; [key: string]: unknown }

/** A pool of the echo fixture (or `input.command`); its log lines land in `logs`; closed at teardown. */
export function poolFor(
  t: Teardown,
  input: Partial<StdioUpstreamInput> = {},
  options: Partial<StdioPoolOptions> = {},
): { pool: StdioPool; logs: LogLine[] } {
  const logs: LogLine[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as LogLine)
      done()
    },
  })
  const log = pino({ level: 'debug' }, sink)
  const config = resolveStdioUpstream({ name: 'echo', command: ['node', echoServer], ...input }, process.cwd())
  const pool = new StdioPool(config, { log, graceMs: 500, ...options })
  t.teardown(() => pool.close())
  return { pool, logs }
}

/** An initialized client over the pool; closed at teardown. */
export async function connect(t: Teardown, pool: StdioPool, key: StdioPoolKey, init: InitializeOptions = {}, timeoutMs = 10_000): Promise<McpClient> {
  const client = new McpClient(pool.transportFor(key), { timeoutMs })
  t.teardown(() => client.close())
  await client.initialize(init)
  return client
}

/** The JSON a fixture tool answered with. */
export function answer<T = Record<string, unknown>>(result: { content: unknown[] }): T {
  return JSON.parse((result.content[0] as { text: string }).text) as T
}

/**
 * True while a process with this pid exists (signal 0 only asks) and is not a zombie: a killed
 * grandchild is reparented to init, and some inits reap late (about a second here), while the
 * process is already dead.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true // no /proc: signal 0 is all there is
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
