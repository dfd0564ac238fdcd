/**
 * The node:cluster primary (`workers: N | auto`, or `store: { type: cluster }`): forks the workers
 * that share the listening port, holds the cluster store's sessions when that is the store, replaces
 * a worker that dies (with backoff, logging why), has the workers reload on SIGHUP (each loads the
 * config and the handler modules afresh, after a check), and on SIGTERM/SIGINT drains them and exits 0.
 *
 *   primary ── ClusterStoreHost (MemoryStore) ◄──IPC──► worker 1 … worker N ──► shared port
 *      │ exit of a worker ──► log { code | signal, reason } ──► fork again after 0.1 s … 30 s
 *      │ SIGHUP ──► `mcp-edge check` in a child ──fails──► log every problem; the workers serve on
 *      │             └─ok──► { reload } to every worker: each serves a new generation under its port
 *      └ SIGTERM ──► { drain } to every worker ──► all gone (or drain_timeout + 5 s, then SIGKILL) ──► exit 0
 *
 * The primary never loads handler code; a worker is the only place a request runs.
 */
import { randomBytes } from 'node:crypto'
import cluster, { type Worker } from 'node:cluster'
import { availableParallelism } from 'node:os'
import type { Logger } from 'pino'
import { isClusterSignal, runWorker, type ClusterSignal } from './cluster-worker.ts'
import { serveClusterMetrics } from '../edge/metrics.ts'
import type { GatewayConfig } from '../config/types.ts'
import { createLogger, flushLogger } from '../log/logger.ts'
import { ClusterStoreHost } from '../store/cluster-host.ts'
import { ClusterLimiterHost } from '../store/limiter-cluster.ts'
import { expiresInOf, MemoryLimiter } from '../store/limiter-memory.ts'
import { checkInChild, serializeReloads, watchForChanges, writePidFile } from './reload.ts'
import { MemoryStore } from '../store/memory.ts'
import { clusterAdminSource, startAdmin } from '../admin/admin-server.ts'
import { reapGroupsOf } from '../upstream/process-groups.ts'
import { memoryStoreOptions } from '../store/create-store.ts'

/** A worker that lived less than this counts as a crash loop for the backoff. */
const STABLE_MS = 10_000
const MAX_BACKOFF_MS = 30_000
/** Workers that die in a row before ever listening: the config or a handler is broken, stop trying. */
const MAX_FAILED_STARTS = 5
/** Time a drained worker gets beyond drain_timeout before it is killed. */
const EXIT_GRACE_MS = 5000

/** Whether `mcp-edge start` runs a primary for this config (rather than one process serving alone). */
export function needsPrimary(config: GatewayConfig): boolean {
  return config.workers === 'auto' || config.workers > 1 || config.store.type === 'cluster'
}

/** The number of workers `workers` asks for on this machine. */
export function workerCount(config: GatewayConfig): number {
  return config.workers === 'auto' ? availableParallelism() : config.workers
}

/** `mcp-edge start` under cluster: the primary forks and supervises; a worker serves. */
export async function startCluster(config: GatewayConfig, options: { watch?: boolean } = {}): Promise<void> {
  if (cluster.isPrimary) {
    if (config.store.type === 'memory') {
      throw new Error('store type memory cannot be shared by several workers: use cluster (the default when workers > 1) or redis')
    }
    runPrimary(config, options.watch === true)
    return
  }
  try {
    await runWorker(config)
  } catch (error) {
    // The IPC channel would keep a worker that cannot start alive: tell the primary why, and go.
    const reason = error instanceof Error ? error.message : String(error)
    process.stderr.write(`mcp-edge worker: cannot start: ${reason}\n`)
    if (process.send === undefined) process.exit(2)
    process.send({ mcpEdgeCluster: 'fatal', reason } satisfies ClusterSignal, () => process.exit(2))
  }
}

interface WorkerState {
  startedAt: number
  listening: boolean
  /** Set when the primary asked it to go (drain, reload): its exit is expected. */
  retiring: boolean
  fatal?: string
}

function runPrimary(config: GatewayConfig, watch: boolean, logger: Logger = createLogger(config.log, { base: { role: 'primary' } })): void {
  const count = workerCount(config)
  const states = new Map<Worker, WorkerState>()
  let host: ClusterStoreHost | undefined
  let limiterHost: ClusterLimiterHost | undefined
  if (config.store.type === 'cluster') {
    const sessions = new MemoryStore(memoryStoreOptions(config.store))
    host = new ClusterStoreHost(sessions)
    // Rate limits and quotas of every worker, counted beside the sessions they count.
    limiterHost = new ClusterLimiterHost(new MemoryLimiter({ alive: (id) => sessions.peek(id) !== undefined, expiresIn: expiresInOf(sessions) }))
  }
  // A scrape reaches one worker; it asks here, and the answer covers every worker.
  if (config.metrics.enabled) serveClusterMetrics()
  let crashes = 0
  let failedStarts = 0
  let stopping = false

  // Workers run this same command (bin.mjs start …), which lands in startCluster as a worker.
  cluster.setupPrimary({ exec: process.argv[1], args: process.argv.slice(2) })
  // A stateless request's rounds may land on different workers: they must all sign requestState
  // with one key. Without a configured key, the primary makes one for its workers (they inherit
  // the environment). Several hosts still need the same key configured on each.
  if (config.request_state.key === undefined && process.env.MCP_EDGE_REQUEST_STATE_KEY === undefined) {
    process.env.MCP_EDGE_REQUEST_STATE_KEY = randomBytes(32).toString('base64url')
  }

  const fork = (): Worker => {
    const worker = cluster.fork()
    states.set(worker, { startedAt: Date.now(), listening: false, retiring: false })
    host?.attach(worker)
    limiterHost?.attach(worker)
    // A worker killed outright cannot stop its stdio children: the primary does.
    reapGroupsOf(worker)
    worker.on('message', (message: unknown) => {
      const state = states.get(worker)
      if (state !== undefined && isClusterSignal(message) && message.mcpEdgeCluster === 'fatal') state.fatal = message.reason
    })
    return worker
  }

  cluster.on('listening', (worker) => {
    const state = states.get(worker)
    if (state !== undefined) state.listening = true
    failedStarts = 0
  })

  cluster.on('exit', (worker, code, signal) => {
    const state = states.get(worker)
    states.delete(worker)
    if (state === undefined || state.retiring || stopping) {
      if (stopping && states.size === 0) finish()
      return
    }
    const lived = Date.now() - state.startedAt
    crashes = lived < STABLE_MS ? crashes + 1 : 0
    if (!state.listening) failedStarts++
    const how = signal !== null ? `killed by ${signal}` : `exited with code ${code}`
    const reason = state.fatal?.split('\n')[0]
    if (failedStarts >= MAX_FAILED_STARTS) {
      logger.fatal({ worker: worker.id, workerPid: worker.process.pid, code, signal, reason }, `worker ${how} before listening, ${failedStarts} times in a row: giving up`)
      shutdown('workers cannot start', 2)
      return
    }
    const delay = crashes <= 1 ? 0 : Math.min(100 * 2 ** (crashes - 2), MAX_BACKOFF_MS)
    logger.error({ worker: worker.id, workerPid: worker.process.pid, code, signal, reason, livedMs: lived, restartInMs: delay }, `worker ${how}; starting a new one`)
    setTimeout(() => {
      if (!stopping) fork()
    }, delay)
  })

  let exitCode = 0
  let killTimer: NodeJS.Timeout | undefined
  const finish = (): void => {
    clearTimeout(killTimer)
    void Promise.allSettled([host?.close(), limiterHost?.close()]).finally(() => {
      logger.info({ exitCode }, 'primary stopped')
      void flushLogger(logger).then(() => process.exit(exitCode))
    })
  }
  const retire = (worker: Worker): void => {
    const state = states.get(worker)
    if (state !== undefined) state.retiring = true
    try {
      worker.send({ mcpEdgeCluster: 'drain' } satisfies ClusterSignal)
    } catch {
      worker.process.kill('SIGTERM')
    }
  }
  const shutdown = (why: string, code = 0): void => {
    if (stopping) return
    stopping = true
    exitCode = code
    logger.info({ why, workers: states.size }, 'primary stopping: draining workers')
    if (states.size === 0) return finish()
    for (const worker of states.keys()) retire(worker)
    killTimer = setTimeout(() => {
      for (const worker of states.keys()) worker.process.kill('SIGKILL')
    }, config.drain_timeout * 1000 + EXIT_GRACE_MS)
  }

  /**
   * Checks the new config and handlers in a fresh process first; only then asks every worker to load
   * them as a new generation under its port (no connection closed, no request dropped). A failure
   * leaves the workers serving what they served.
   */
  const reload = async (): Promise<{ ok: boolean; problems: string[]; detail?: string }> => {
    const checked = await checkInChild(config.file)
    if (!checked.ok) {
      logger.error({ problems: checked.problems }, `reload refused, the workers keep serving the old config:\n${checked.problems.join('\n')}`)
      return checked
    }
    const workers = [...states].filter(([, state]) => state.listening && !state.retiring).map(([worker]) => worker)
    const outcomes = await Promise.all(workers.map((worker) => reloadWorker(worker)))
    const problems = outcomes.flatMap((outcome) => outcome.problems)
    const reloaded = outcomes.filter((outcome) => outcome.ok).length
    if (problems.length > 0) logger.error({ problems, reloaded, workers: workers.length }, 'reload: a worker could not reload')
    else logger.info({ workers: reloaded }, 'reloaded')
    return { ok: problems.length === 0, problems, detail: `${reloaded} of ${workers.length} workers reloaded` }
  }
  const reloadWorker = (worker: Worker): Promise<{ ok: boolean; problems: string[] }> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => finish({ ok: false, problems: [`worker ${worker.id} did not reload within 60 s`] }), 60_000)
      const onMessage = (message: unknown): void => {
        if (isClusterSignal(message) && message.mcpEdgeCluster === 'reloaded') finish(message)
      }
      const onExit = (): void => finish({ ok: false, problems: [`worker ${worker.id} exited while reloading`] })
      const finish = (outcome: { ok: boolean; problems: string[] }): void => {
        clearTimeout(timer)
        worker.off('message', onMessage)
        worker.off('exit', onExit)
        resolve(outcome)
      }
      worker.on('message', onMessage)
      worker.once('exit', onExit)
      worker.send({ mcpEdgeCluster: 'reload' } satisfies ClusterSignal)
    })
  const requestReload = serializeReloads(config.file, logger, reload)

  process.once('SIGTERM', () => shutdown('SIGTERM'))
  process.once('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGHUP', () => void requestReload('SIGHUP'))
  if (config.admin !== undefined) {
    startAdmin(config.admin, clusterAdminSource(() => requestReload('POST /api/reload')), logger).catch((error: unknown) => {
      logger.fatal({ err: error }, 'the admin listener cannot listen')
      shutdown('admin listener failed', 2)
    })
  }
  if (watch) watchForChanges(config, (file) => requestReload(`changed: ${file}`), logger)
  void writePidFile(config.file).catch((error: unknown) => logger.warn({ err: error }, 'cannot write the pid file: mcp-edge reload will not find this gateway'))
  for (let n = 0; n < count; n++) fork()
  logger.info({ workers: count, store: config.store.type, listen: config.listen, config: config.file }, 'mcp-edge primary started')
}
