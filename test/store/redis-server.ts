// A real redis-server on a free loopback port, one per test file, killed at teardown. It can be
// stopped and started again on the same port (to test outages).
import { spawn, type ChildProcess } from 'node:child_process'
import { onFreePort } from '../fixtures/waiting.ts'
import { reapOnExit } from './reaper.ts'

interface Teardown { teardown(fn: () => unknown): void }

export interface RedisServer {
  readonly url: string
  readonly port: number
  /** Kills the server (SIGKILL: no goodbye to clients); resolves once it is gone. */
  stop(): Promise<void>
  /** Starts it again on the same port: empty, or with what its append-only file kept. */
  start(): Promise<void>
  /** Freezes the server (SIGSTOP): connections stay open, commands wait in its input buffer. */
  freeze(): void
  /** Wakes it (SIGCONT): it runs what waited, in order. */
  thaw(): void
}

/** Persistence for a server that must keep its data over a restart: an append-only file, synced before each reply. */
export interface RedisOptions {
  /** The folder of the append-only file; none: no persistence (a restart starts empty). */
  appendonlyDir?: string
}

function launch(port: number, options: RedisOptions): Promise<ChildProcess> {
  const persistence = options.appendonlyDir === undefined
    ? ['--appendonly', 'no']
    : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.appendonlyDir]
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], { stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        child.stdout!.off('data', onData)
        child.stdout!.resume()
        resolve(child)
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.resume()
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)))
  })
}

/** Starts redis-server for this test file; it is killed at teardown. */
export async function startRedis(t: Teardown, options: RedisOptions = {}): Promise<RedisServer> {
  const [port, first] = await onFreePort(async (port) => [port, await launch(port, options)] as const)
  let child: ChildProcess | undefined = first
  const stop = async (): Promise<void> => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null) return
    const gone = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await gone
  }
  const signal = (name: NodeJS.Signals): void => {
    if (child === undefined || child.exitCode !== null) throw new Error('redis-server is not running')
    child.kill(name)
  }
  t.teardown(stop)
  return {
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    async start() {
      if (child === undefined) child = await launch(port, options)
    },
  }
}
