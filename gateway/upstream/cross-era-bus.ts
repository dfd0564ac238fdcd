/**
 * Reaching a parked upstream call from any worker. A call is parked in the process that holds its
 * upstream connection (a stdio child, an SSE stream), so the stateless retry that answers it, which a
 * load balancer may hand to any worker on any host, is taken there over the store's bus:
 *
 *   worker B (retry)                                     worker A (owner of park P)
 *     park-resume {to: A, park: P, round, answers} ──►    P.resume(answers)
 *                                                  ◄──    park-reply ack        (within producer_timeout)
 *                                                  ◄──    park-reply note …     (progress, log of this round)
 *                                                  ◄──    park-reply outcome    (result | error | next input)
 *     client closed its stream: park-cancel ──────►       P.cancel
 *
 * No ack in time, or `gone` (A restarted, or P expired): the caller replays the call (cross-era.ts).
 */
import { randomUUID } from 'node:crypto'
import type { BusMessage, ParkOutcome, ParkReplyMessage, ParkResumeMessage } from '../store/bus-message.ts'
import type { Bus } from '../store/store.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'
import type { ParkingLot, RoundSink } from './cross-era-park.ts'

/** A resume whose owner is unknown or silent: the caller replays. */
export const GONE = 'gone'

type Reply = ParkReplyMessage['reply']

export class ParkBus {
  /** This worker's name on the park channel (carried in the requestState of calls parked here). */
  readonly worker = randomUUID()
  readonly #bus: Bus
  readonly #channel: string
  readonly #find: (park: string) => ParkingLot | undefined
  readonly #waiting = new Map<string, (reply: Reply) => void>()
  readonly #unsubscribe: () => void

  /** `find` names the lot holding a park of this worker. */
  constructor(bus: Bus, location: string, find: (park: string) => ParkingLot | undefined) {
    this.#bus = bus
    this.#channel = `park:${location}`
    this.#find = find
    this.#unsubscribe = bus.subscribe(this.#channel, (message) => this.#received(message))
  }

  /**
   * Resumes park `park` on worker `owner` with the client's answers; the round's notifications go to
   * `sink`. Resolves with the outcome, or GONE when the owner does not take it within `ackMs`.
   */
  resume(owner: string, park: string, round: number, principal: string | undefined, answers: JsonObject, sink: RoundSink, cancel: AbortSignal, ackMs: number, roundMs: number): Promise<ParkOutcome | typeof GONE> {
    const ticket = randomUUID()
    return new Promise((resolve) => {
      let timer = setTimeout(() => finish(GONE), ackMs)
      const onAbort = (): void => {
        this.#publish({ type: 'park-cancel', to: owner, park, reason: 'the client closed the response stream' })
        finish({ kind: 'failure', message: 'the client closed the response stream', timeout: false })
      }
      const finish = (outcome: ParkOutcome | typeof GONE): void => {
        clearTimeout(timer)
        cancel.removeEventListener('abort', onAbort)
        this.#waiting.delete(ticket)
        resolve(outcome)
      }
      this.#waiting.set(ticket, (reply) => {
        switch (reply.kind) {
          case 'ack':
            clearTimeout(timer)
            // The owner keeps its own round deadline; this one only covers a lost owner.
            timer = setTimeout(() => finish({ kind: 'failure', message: `the worker holding the call gave no answer within ${roundMs} ms`, timeout: true, timeoutMs: roundMs + ackMs }), roundMs + ackMs)
            return
          case 'gone':
            return finish(GONE)
          case 'note':
            if ('method' in reply.message) noteTo(sink, reply.message.method, reply.message.params ?? {})
            return
          case 'outcome':
            return finish(reply.outcome)
        }
      })
      cancel.addEventListener('abort', onAbort, { once: true })
      this.#publish({ type: 'park-resume', to: owner, from: this.worker, ticket, park, round, principal: principal ?? null, answers })
    })
  }

  close(): void {
    this.#unsubscribe()
    for (const waiter of this.#waiting.values()) waiter({ kind: 'gone' })
  }

  #received(message: BusMessage): void {
    if (message.type === 'park-reply') {
      if (message.to === this.worker) this.#waiting.get(message.ticket)?.(message.reply)
    } else if (message.type === 'park-resume') {
      if (message.to === this.worker) this.#resume(message)
    } else if (message.type === 'park-cancel') {
      if (message.to === this.worker) this.#find(message.park)?.get(message.park)?.cancel(message.reason)
    }
  }

  #resume(message: ParkResumeMessage): void {
    const reply = (body: Reply): void => this.#publish({ type: 'park-reply', to: message.from, ticket: message.ticket, reply: body })
    const sink: RoundSink = {
      progress: (progress, total, text) => reply({ kind: 'note', message: notification('notifications/progress', { progress, ...(total === undefined ? {} : { total }), ...(text === undefined ? {} : { message: text }) }) }),
      log: (level, data, logger) => reply({ kind: 'note', message: notification('notifications/message', { level, logger, data: data as JsonObject }) }),
    }
    const lot = this.#find(message.park)
    const resumed = lot === undefined ? GONE : lot.resume(message.park, message.round, message.principal ?? undefined, message.answers, sink, undefined)
    if (resumed === GONE) return reply({ kind: 'gone' })
    reply({ kind: 'ack' })
    void resumed.then((outcome) => reply({ kind: 'outcome', outcome }))
  }

  #publish(message: BusMessage): void {
    // A lost message ends as a timeout on the waiting side.
    this.#bus.publish(this.#channel, message).catch(() => undefined)
  }
}

/** A notification of the owner's round, delivered to this worker's round. */
function noteTo(sink: RoundSink, method: string, params: JsonObject): void {
  if (method === 'notifications/progress' && typeof params.progress === 'number') {
    sink.progress(params.progress, params.total as number | undefined, params.message as string | undefined)
  } else if (method === 'notifications/message') {
    sink.log(params.level as LogLevel, params.data, String(params.logger))
  }
}
