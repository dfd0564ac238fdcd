/**
 * What this worker holds for the sessions it is serving right now: requests in flight (for
 * cancellation), server→client requests awaiting the client's answer, and the standalone outlet
 * (the GET stream). Entries exist only while there is something to hold, so an idle session costs
 * nothing here.
 */
import type { RequestId } from '../wire/jsonrpc.ts'
import type { SessionOutlet } from './sink.ts'
import { SoloMap } from '../wire/solo-map.ts'

/** A request this worker is serving; cancel() is what notifications/cancelled triggers. */
export interface InFlight {
  cancel(reason: string): void
}

/** A server→client request awaiting its answer. */
export interface AwaitingAnswer {
  resolve(result: unknown): void
  reject(error: Error): void
  progress(progress: number, total?: number, message?: string): void
}

export class LiveSession {
  /** A SoloMap: a session's one call in flight comes and goes without a Map growing and shrinking. */
  readonly inflight = new SoloMap<RequestId, InFlight>()
  outlet: SessionOutlet | undefined = undefined
  /** Made on first use: an entry lives for each asynchronous request, and most never ask the client anything. */
  #awaiting: Map<string, AwaitingAnswer> | undefined

  get awaiting(): Map<string, AwaitingAnswer> {
    return (this.#awaiting ??= new Map())
  }

  get idle(): boolean {
    return this.inflight.size === 0 && (this.#awaiting === undefined || this.#awaiting.size === 0) && this.outlet === undefined
  }
}

export class LiveSessions {
  /** A SoloMap: with one session's call running at a time, the entry comes and goes on every call. */
  readonly #sessions = new SoloMap<string, LiveSession>()

  get(id: string): LiveSession | undefined {
    return this.#sessions.get(id)
  }

  /** The live entry for a session, created on first use. */
  hold(id: string): LiveSession {
    let live = this.#sessions.get(id)
    if (live === undefined) this.#sessions.set(id, (live = new LiveSession()))
    return live
  }

  /** Forgets the session once nothing is held for it any more. */
  release(id: string, live: LiveSession): void {
    if (live.idle && this.#sessions.get(id) === live) this.#sessions.delete(id)
  }

  /** Makes `outlet` the session's standalone stream on this worker; false when one is already open. */
  openOutlet(id: string, outlet: SessionOutlet): boolean {
    const live = this.hold(id)
    if (live.outlet !== undefined) return false
    live.outlet = outlet
    return true
  }

  /** Forgets `outlet` if it is still the session's standalone stream. */
  closeOutlet(id: string, outlet: SessionOutlet): void {
    const live = this.#sessions.get(id)
    if (live === undefined || live.outlet !== outlet) return
    live.outlet = undefined
    this.release(id, live)
  }

  /** Ends everything held for a session (it was deleted or expired). */
  end(id: string): void {
    const live = this.#sessions.get(id)
    if (live === undefined) return
    this.#sessions.delete(id)
    for (const request of live.inflight.values()) request.cancel('session ended')
    for (const answer of live.awaiting.values()) answer.reject(new Error('session ended'))
    live.outlet?.close()
  }

  ids(): IterableIterator<string> {
    return this.#sessions.keys()
  }

  entries(): IterableIterator<[string, LiveSession]> {
    return this.#sessions.entries()
  }
}
