/**
 * What a handler sees as a session (`ctx.session`, a route event's session): the record's facts and
 * the calls that reach that session wherever its stream is (resources/updated, enable/disable,
 * server→client requests on the standalone stream). Also the stand-in a stateless request gets, and
 * the list_changed notifications that follow a registry or visibility change.
 */
import type { RouteConfig } from '../config/types.ts'
import type { ClientRequestOptions, ComponentKind, SessionView } from '../registry/context.ts'
import type { SessionRecord, SessionStore } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { askClient, createMessage, elicit, listRoots, type Ask } from './client-requests.ts'
import type { LiveSessions } from './live-sessions.ts'
import type { Notifier } from './notifier.ts'
import { tooManyHidden } from './session-limits.ts'
import type { Envelope } from './stateless/envelope.ts'

/** What the views need of their route. */
export interface ViewHost {
  readonly route: RouteConfig
  readonly store: SessionStore
  readonly notifier: Notifier
  readonly live: LiveSessions
  readonly readTimeoutMs: number
  nextClientRequestId(): string
}

type ListName = 'tools' | 'prompts' | 'resources'

export class SessionViews {
  readonly #host: ViewHost

  constructor(host: ViewHost) {
    this.#host = host
  }

  /** The session `record` as its handlers see it. */
  sessionView(record: SessionRecord): SessionView {
    const ask: Ask = (method, params, options) => this.#askSession(record.id, method, params, options)
    return {
      id: record.id,
      protocolVersion: record.protocolVersion,
      clientInfo: record.clientInfo,
      clientCapabilities: record.clientCapabilities,
      resourceUpdated: (uri) => this.resourceUpdated(uri, [record.id]),
      enable: (kind, name) => this.#setHidden(record.id, kind, name, false),
      disable: (kind, name) => this.#setHidden(record.id, kind, name, true),
      elicit: (message, schema, options) => elicit(record.clientCapabilities, ask, message, schema, options),
      createMessage: (messages, maxTokens, options) => createMessage(record.clientCapabilities, ask, messages, maxTokens, options),
      listRoots: (options) => listRoots(record.clientCapabilities, ask, options),
      ping: async (options) => {
        await ask('ping', undefined, options)
      },
    }
  }

  /** What a stateless request's handler sees as its session: the envelope, and no per-session state. */
  statelessSession(envelope: Envelope): SessionView {
    const noSession = async (): Promise<never> => {
      throw new EdgeError('MCP_EDGE_SESSION_REQUIRED', 'this needs a session; a stateless request asks the client through ctx')
    }
    return {
      id: '',
      protocolVersion: envelope.protocolVersion,
      clientInfo: envelope.clientInfo,
      clientCapabilities: envelope.clientCapabilities,
      resourceUpdated: (uri) => this.resourceUpdated(uri),
      enable: noSession,
      disable: noSession,
      elicit: noSession,
      createMessage: noSession,
      listRoots: noSession,
      ping: noSession,
    }
  }

  /** Sends resources/updated to `sessionIds` (default: every session of the route) subscribed to `uri`. */
  async resourceUpdated(uri: string, sessionIds?: string[]): Promise<void> {
    const { notifier, store } = this.#host
    if (sessionIds === undefined) notifier.resourceUpdated(uri)
    for (const id of sessionIds ?? (await store.sessionIds(this.#host.route.location))) {
      const record = await store.get(id)
      if (record?.subscriptions.includes(uri)) notifier.notifySession(id, notification('notifications/resources/updated', { uri }))
    }
  }

  /** Tells every session of the route that `list` changed, when the route declares list_changed for it. */
  listChanged(list: ListName): void {
    if (this.#listChangedDeclared(list)) this.#host.notifier.notifyRoute(notification(`notifications/${list}/list_changed`))
  }

  /** A server→client request on the session's standalone stream, outside any request. */
  #askSession(sessionId: string, method: string, params: JsonObject | undefined, options: ClientRequestOptions = {}): Promise<unknown> {
    const { live, notifier } = this.#host
    const held = live.hold(sessionId)
    return askClient({
      id: this.#host.nextClientRequestId(),
      method,
      params,
      options,
      defaultTimeoutMs: this.#host.readTimeoutMs,
      awaiting: held.awaiting,
      send: (message) => notifier.notifySession(sessionId, message),
      onSettled: () => live.release(sessionId, held),
    })
  }

  async #setHidden(sessionId: string, kind: ComponentKind, name: string, hidden: boolean): Promise<void> {
    const key = `${kind}:${name}`
    const limits = this.#host.route.limits
    const updated = await this.#host.store.update(sessionId, hidden ? { hide: key, max: limits.hidden_components } : { show: key })
    if (hidden && updated !== undefined && !updated.hidden.includes(key)) throw tooManyHidden(limits)
    const list = kind === 'tool' ? 'tools' : kind === 'prompt' ? 'prompts' : 'resources'
    if (this.#listChangedDeclared(list)) this.#host.notifier.notifySession(sessionId, notification(`notifications/${list}/list_changed`))
  }

  #listChangedDeclared(list: ListName): boolean {
    const capability = this.#host.route.capabilities[list]
    return capability !== false && capability.list_changed
  }
}
