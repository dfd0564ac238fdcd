// Real Redis deployments for tests, started by the test in a folder of its own and killed at
// teardown: a master with a replica watched by one Sentinel, and a three-node Redis Cluster made
// with `redis-cli --cluster create`. Loopback only, free ports.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { reapOnExit } from './reaper.ts'
import { freePort } from '../fixtures/waiting.ts'

interface Teardown { teardown(fn: () => unknown): void }

/** Runs a redis binary with `args` until it says it is ready; killed at teardown. */
function launch(t: Teardown, binary: string, args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      if (ready.test(output)) {
        child.stdout!.off('data', onData)
        child.stdout!.resume()
        resolve(child)
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.resume()
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${binary} exited (${code}): ${output}`)))
  })
}

function folder(t: Teardown, name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `mcp-edge-${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

export interface SentinelDeployment {
  /** The sentinel's `host:port`, as the store's `sentinels` takes it. */
  readonly sentinel: string
  /** The master set name. */
  readonly name: string
  /** The port of the server that is master now (asks the sentinel). */
  masterPort(): Promise<number>
  /** Makes the sentinel fail the master over to the replica; resolves once the replica is master and the old master its replica. */
  failover(): Promise<{ from: number; to: number }>
  /** Waits until the replica has every write the master took so far. */
  synced(): Promise<void>
}

/** A master, its replica and one Sentinel (quorum 1) watching them as `name`. */
export async function startSentinel(t: Teardown, name = 'mcp-edge-test'): Promise<SentinelDeployment> {
  const dir = folder(t, 'sentinel')
  const [masterPort, replicaPort, sentinelPort] = [await freePort(), await freePort(), await freePort()]
  const server = (port: number, extra: string[]): Promise<ChildProcess> =>
    launch(t, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], /Ready to accept connections/)
  await server(masterPort, [])
  await server(replicaPort, ['--replicaof', '127.0.0.1', String(masterPort)])
  const conf = path.join(dir, 'sentinel.conf')
  writeFileSync(conf, [
    `port ${sentinelPort}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
    `sentinel down-after-milliseconds ${name} 1000`,
    `sentinel failover-timeout ${name} 5000`,
    `sentinel parallel-syncs ${name} 1`,
    '',
  ].join('\n'))
  await launch(t, 'redis-sentinel', [conf], /Sentinel ID is|monitor master/)
  const sentinel = new Redis({ port: sentinelPort, host: '127.0.0.1', lazyConnect: false })
  t.teardown(() => sentinel.disconnect())
  const masterPortNow = async (): Promise<number> => {
    const [, port] = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', name)) as [string, string]
    return Number(port)
  }
  const replicas = async (): Promise<number> => {
    const known = (await sentinel.call('SENTINEL', 'replicas', name)) as string[][]
    return known.length
  }
  // The sentinel learns about the replica from the master's INFO, every few seconds.
  await until('the sentinel to know the replica', async () => ((await replicas()) > 0 ? true : undefined))
  const synced = async (): Promise<void> => {
    const master = new Redis({ port: await masterPortNow(), host: '127.0.0.1' })
    try {
      await until('the replica to catch up', async () => (Number(await master.call('WAIT', '1', '1000')) >= 1 ? true : undefined))
    } finally {
      master.disconnect()
    }
  }
  return {
    sentinel: `127.0.0.1:${sentinelPort}`,
    name,
    masterPort: masterPortNow,
    synced,
    async failover() {
      const from = await masterPortNow()
      await until('the sentinel to accept a failover', async () => (await sentinel.call('SENTINEL', 'failover', name)) === 'OK' ? true : undefined)
      const to = await until('a new master', async () => {
        const port = await masterPortNow()
        if (port === from) return undefined
        const promoted = new Redis({ port, host: '127.0.0.1' })
        try {
          return /role:master/.test(await promoted.info('replication')) ? port : undefined
        } finally {
          promoted.disconnect()
        }
      })
      // The old master keeps taking writes until the sentinel turns it into a replica of the new one.
      const demoted = new Redis({ port: from, host: '127.0.0.1' })
      try {
        await until('the old master to be demoted', async () => (/role:slave/.test(await demoted.info('replication')) ? true : undefined))
      } finally {
        demoted.disconnect()
      }
      return { from, to }
    },
  }
}

export interface ClusterDeployment {
  /** Seed nodes as `host:port`, as the store's `cluster` takes them. */
  readonly nodes: string[]
}

/** Three masters, no replicas, slots split by `redis-cli --cluster create`; waits for cluster_state:ok. */
export async function startRedisCluster(t: Teardown): Promise<ClusterDeployment> {
  const dir = folder(t, 'cluster')
  const ports = [await freePort(), await freePort(), await freePort()]
  await Promise.all(ports.map((port) => launch(t, 'redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
    '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000',
  ], /Ready to accept connections/)))
  const nodes = ports.map((port) => `127.0.0.1:${port}`)
  const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' })
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`)
  for (const port of ports) {
    const node = new Redis({ port, host: '127.0.0.1' })
    try {
      await until(`node ${port} to see the cluster ok`, async () => (/cluster_state:ok/.test(String(await node.call('CLUSTER', 'INFO'))) ? true : undefined))
    } finally {
      node.disconnect()
    }
  }
  return { nodes }
}
