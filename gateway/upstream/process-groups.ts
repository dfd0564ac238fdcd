/**
 * The process groups of the stdio children this process started (each child leads its own group, so
 * whatever it starts goes with it), and their cleanup when the process goes:
 *
 *   worker exits normally or throws ──► its 'exit' hook kills every live group
 *   worker is SIGKILLed (no hook runs) ──► the cluster primary, told of each group as it starts and
 *                                          ends, kills the dead worker's groups
 *
 * Without the second, a killed worker left its children running for good: some servers (such as
 * server-everything) do not exit when their stdin closes.
 */
import cluster, { type Worker } from 'node:cluster'

/** A worker's note to the primary: a group it started, or one that is empty now. */
interface GroupMessage { mcpEdgeGroup: number; live: boolean }

const liveGroups = new Set<number>()
let exitHookInstalled = false

function isGroupMessage(message: unknown): message is GroupMessage {
  return typeof message === 'object' && message !== null && typeof (message as { mcpEdgeGroup?: unknown }).mcpEdgeGroup === 'number'
}

/** Sends `signal` to every process of the group; false when the group is empty (or gone). */
export function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal)
    return true
  } catch {
    return false
  }
}

function tellPrimary(group: number, live: boolean): void {
  if (!cluster.isWorker || process.send === undefined || !process.connected) return
  try {
    process.send({ mcpEdgeGroup: group, live } satisfies GroupMessage)
  } catch {
    // The channel is closing: the primary sees this worker exit and kills what it was told of.
  }
}

/** A group this process started: killed when the process exits, by the primary if it is killed. */
export function groupStarted(group: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.once('exit', () => {
      for (const live of liveGroups) signalGroup(live, 'SIGKILL')
    })
  }
  liveGroups.add(group)
  tellPrimary(group, true)
}

/** A group that is empty now. */
export function groupGone(group: number): void {
  if (liveGroups.delete(group)) tellPrimary(group, false)
}

/** In the primary: keeps `worker`'s live groups and kills them when the worker exits, however it went. */
export function reapGroupsOf(worker: Worker): void {
  const groups = new Set<number>()
  worker.on('message', (message: unknown) => {
    if (!isGroupMessage(message)) return
    if (message.live) groups.add(message.mcpEdgeGroup)
    else groups.delete(message.mcpEdgeGroup)
  })
  worker.once('exit', () => {
    for (const group of groups) signalGroup(group, 'SIGKILL')
  })
}
