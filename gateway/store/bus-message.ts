/**
 * Every message the bus carries between workers, as one union on `type`. Producers build them and
 * consumers switch on `type` with no cast; a new kind is a new member here, and TypeScript then
 * names every switch that does not handle it.
 *
 *   route channel (protocol/notifier)      notify · logged · route · resource · cancel · answer · progress · roots · ended
 *                 (protocol/catalogues)    catalogue
 *   stream channel (transport/stream-relay) event · end · alive
 *   probe channel (transport/stream-follower) probe
 *   tasks channel (tasks/task-service)        task
 *   park channel (upstream/cross-era-bus)      park-resume · park-cancel · park-reply
 *   list-cache channel (upstream/list-cache)   list-cache
 */
import type { JsonRpcMessage, JsonRpcResponse, RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'

/** The worker that published a route-channel message (it ignores its own). */
interface FromWorker {
  from?: string
}

/** A message for the session's standalone stream, wherever it is open (not resumable: not logged). */
export interface NotifyMessage extends FromWorker { type: 'notify'; session: string; message: JsonRpcMessage }
/** The same once logged for replay: its serialised data and event id. */
export interface LoggedMessage extends FromWorker { type: 'logged'; session: string; data: string; eventId: string }
/** A message for every standalone stream of the route; `level` filters by each session's log level. */
export interface RouteMessage extends FromWorker { type: 'route'; message: JsonRpcMessage; level?: LogLevel }
/** A resource changed: listen streams subscribed to it are told. */
export interface ResourceMessage extends FromWorker { type: 'resource'; uri: string }
/** Cancels a request of the session, wherever it runs. */
export interface CancelMessage extends FromWorker { type: 'cancel'; session: string; requestId: RequestId; reason: string }
/** The client's answer to a server→client request, for the worker that waits for it. */
export interface AnswerMessage extends FromWorker { type: 'answer'; session: string; response: JsonRpcResponse }
/** The client's progress on a server→client request, for the worker that waits for it. */
export interface ProgressMessage extends FromWorker { type: 'progress'; session: string; token: string; progress: number; total?: number; message?: string }
/** The client's roots changed (notifications/roots/list_changed): every worker forgets those it kept. */
export interface RootsMessage extends FromWorker { type: 'roots'; session: string }
/** The session was deleted: every worker drops what it holds for it. */
export interface EndedMessage extends FromWorker { type: 'ended'; session: string }

/** The route's catalogue is now at `version` in the store: a worker behind re-reads it before its next request. */
export interface CatalogueMessage extends FromWorker { type: 'catalogue'; version: number }

/** A logged event of a stream, for the workers that follow it. */
export interface StreamEventMessage { type: 'event'; id: string; data: string }
/** The stream ended (its end marker has event id `id`). */
export interface StreamEndMessage { type: 'end'; id: string }
/** The producer of a stream is still there (the answer to a probe). */
export interface StreamAliveMessage { type: 'alive' }
/** A follower asks whether the producer of a stream is still there. */
export interface StreamProbeMessage { type: 'probe'; sessionId: string; streamId: string }

/**
 * Something happened to a task that the worker running it, or a poller waiting on it, must hear:
 * a cancellation (abort the callback), the client's input (resume it), a status change (wake pollers).
 */
export interface TaskMessage { type: 'task'; task: string; event: 'cancel' | 'input' | 'status' }
/** How one round of a parked upstream call ended: its result, its error, or what it asks the client next. */
export type ParkOutcome =
  | { kind: 'result'; result: JsonObject }
  | { kind: 'error'; code: number; message: string; data?: unknown }
  | { kind: 'failure'; message: string; timeout: boolean; timeoutMs?: number }
  | { kind: 'input'; inputRequests: JsonObject; round: number }
/** A stateless retry for a call parked on worker `to`: the client's answers, and where to reply. */
export interface ParkResumeMessage { type: 'park-resume'; to: string; from: string; ticket: string; park: string; round: number; principal: string | null; answers: JsonObject }
/** The retrying client went away: the parked call is cancelled. */
export interface ParkCancelMessage { type: 'park-cancel'; to: string; park: string; reason: string }
/** The owner's reply to a resume: taken (`ack`), unknown (`gone`), a notification of the round, or its outcome. */
export interface ParkReplyMessage {
  type: 'park-reply'
  to: string
  ticket: string
  reply: { kind: 'ack' } | { kind: 'gone' } | { kind: 'note'; message: JsonRpcMessage } | { kind: 'outcome'; outcome: ParkOutcome }
}

/** An upstream's cached lists (all of the route's when none is named) were dropped: workers forget what they parsed. */
export interface ListCacheMessage { type: 'list-cache'; upstream?: string }

/** What the notifier of a route publishes on the route's channel. */
export type RouteBusMessage =
  | NotifyMessage | LoggedMessage | RouteMessage | ResourceMessage | CancelMessage | AnswerMessage | ProgressMessage | RootsMessage | EndedMessage | CatalogueMessage
/** What travels on one stream's channel. */
export type StreamBusMessage = StreamEventMessage | StreamEndMessage | StreamAliveMessage

/** What travels on a proxy route's park channel. */
export type ParkBusMessage = ParkResumeMessage | ParkCancelMessage | ParkReplyMessage

/** A message between workers: one of the kinds above. */
export type BusMessage = RouteBusMessage | StreamBusMessage | StreamProbeMessage | TaskMessage | ParkBusMessage | ListCacheMessage
