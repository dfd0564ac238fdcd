/**
 * The Redis a redis-store scenario needs: REDIS_URL when set (shared: the bench only adds keys under
 * its own prefix), otherwise a private `redis-server` on a free port, pinned with the servers and
 * without persistence. `usedMemory()` reads INFO memory, for the bytes an idle session costs there.
 */
import { execFileSync, spawn } from 'node:child_process'
import net from 'node:net'
import { pinned, SERVER_CORES } from './cpu.ts'
import { freePort } from './servers.ts'

export interface RedisService {
  readonly url: string
  /** `used_memory` of INFO memory, in bytes. */
  usedMemory(): Promise<number>
  stop(): Promise<void>
}

/** undefined when a Redis can be had, otherwise why not. */
export function redisMissing(): string | undefined {
  if (process.env.REDIS_URL !== undefined) return undefined
  try {
    execFileSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'no redis-server on PATH and no REDIS_URL (sudo apt-get install -y redis-server)'
  }
}

/** Sends one inline command and resolves with the whole reply once `complete` accepts it. */
function command(url: string, line: string, complete: (reply: string) => boolean): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port || 6379), hostname || '127.0.0.1')
    let reply = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      reply += chunk
      if (complete(reply)) {
        socket.end()
        resolve(reply)
      }
    })
    socket.on('error', reject)
    socket.write(`${line}\r\n`)
  })
}

async function usedMemory(url: string): Promise<number> {
  // A bulk string: $<length>\r\n<payload>\r\n
  const reply = await command(url, 'INFO memory', (text) => {
    const header = /^\$(\d+)\r\n/.exec(text)
    return header !== null && Buffer.byteLength(text) >= header[0].length + Number(header[1]) + 2
  })
  const match = /used_memory:(\d+)/.exec(reply)
  if (match === null) throw new Error(`no used_memory in INFO memory: ${reply.slice(0, 200)}`)
  return Number(match[1])
}

export async function startRedis(): Promise<RedisService> {
  const external = process.env.REDIS_URL
  if (external !== undefined) return { url: external, usedMemory: () => usedMemory(external), stop: async () => undefined }
  const port = await freePort()
  const [cmd, args] = pinned(SERVER_CORES, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
  const child = spawn(cmd, args, { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = `redis://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    const pong = await command(url, 'PING', (text) => text.includes('\r\n')).catch(() => '')
    if (pong.startsWith('+PONG')) break
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error(`redis-server did not answer on port ${port}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    url,
    usedMemory: () => usedMemory(url),
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}
