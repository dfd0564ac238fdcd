/**
 * The log phase of a route: its module sees each finished call after the answer was sent, fed by the
 * call events (events/call-events.ts), the same ones the metrics and the admin view read, in batches
 * on setImmediate: off the request path. A route without `phases.log` subscribes nothing.
 *
 *   answer sent ─► CallEvents ─► batch (setImmediate) ─► this route's events ─► log module, one call each
 *                                                                            └► throws/rejects ─► logged {ref, err}
 */
import type { Logger } from 'pino'
import type { CallEvent, CallEvents } from '../events/call-events.ts'
import { reportFailure } from '../registry/failure-report.ts'

/** A log module's default export: one finished call (never its arguments nor a credential). */
export type LogModule = (event: CallEvent) => void | Promise<void>

/** Feeds `module` the calls of route `location`; returns the unsubscribe. */
export function subscribeLogPhase(events: CallEvents, location: string, module: LogModule, logger: Logger): () => void {
  const failed = (error: unknown): void => void reportFailure(logger, error, { route: location, phase: 'log' }, 'log phase failed')
  return events.subscribe((batch) => {
    for (const event of batch) {
      if (event.route !== location) continue
      try {
        const done = module(event)
        if (done instanceof Promise) done.catch(failed)
      } catch (error) {
        failed(error)
      }
    }
  })
}
