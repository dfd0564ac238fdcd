/**
 * What a handler sees as a session (`ctx.session`, a route event's session): the record's facts and
 * the calls that reach that session wherever its stream is (resources/updated, enable/disable,
 * server→client requests on the standalone stream). Also the stand-in a stateless request gets, and
 * the list_changed notifications that follow a registry or visibility change.
 */
import type { RouteConfig } from '../config/types.ts'
import { checkedEntries, type CatalogueChange } from '../registry/catalogue.ts'
import type { Component } from '../registry/components.ts'
import type { ClientRequestOptions, ComponentKind, ComponentRef, SessionView } from '../registry/context.ts'
import type { SessionRecord, SessionStore } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'
import { askClient, createMessage, elicit, listRoots, type Ask } from './client-requests.ts'
import type { LiveSessions } from './live-sessions.ts'
import type { Notifier } from './notifier.ts'
import type { Catalogues } from './catalogues.ts'
import { sessionState } from './session-state.ts'
import { levelPasses } from './context-base.ts'
import { tooManyHidden } from './session-limits.ts'
import type { Envelope } from './stateless/envelope.ts'

/** What the views need of their route. */
export interface ViewHost {
  readonly route: RouteConfig
  readonly store: SessionStore
  readonly notifier: Notifier
  readonly live: LiveSessions
  readonly readTimeoutMs: number
  readonly catalogues: Catalogues
  /** The route declares the logging capability. */
  readonly logging: boolean
  nextClientRequestId(): string
  logToGateway(level: LogLevel, data: unknown, logger: string | undefined, sessionId: string | undefined): void
  /** Ends a session everywhere (its record, its streams on every worker). */
  deleteSession(id: string): Promise<boolean>
}

type ListName = 'tools' | 'prompts' | 'resources'

type SessionCatalogueCalls = Pick<SessionView, 'register' | 'unregisterTool' | 'unregisterPrompt' | 'unregisterResource' | 'unregisterResourceTemplate' | 'replaceTools' | 'replacePrompts' | 'replaceResources' | 'replaceResourceTemplates'>

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
      state: sessionState(this.#host.store, record.id, this.#host.route.limits.session_state),
      ...this.#sessionCatalogue(record.id),
      elicit: (message, schema, options) => elicit(record.clientCapabilities, ask, message, schema, options),
      createMessage: (messages, maxTokens, options) => createMessage(record.clientCapabilities, ask, messages, maxTokens, options),
      listRoots: (options) => this.#host.notifier.roots.get(record.id, record.clientCapabilities, () => listRoots(record.clientCapabilities, ask, options)),
      ping: async (options) => {
        await ask('ping', undefined, options)
      },
      log: (level, data, logger) => this.#logToSession(record.id, level, data, logger),
      shutdown: async () => {
        await this.#host.deleteSession(record.id)
      },
    }
  }

  /** What a stateless request's handler sees as its session: the envelope, and no per-session state. */
  statelessSession(envelope: Envelope): SessionView {
    const noSession = async (): Promise<never> => {
      // The model and its user read this (a tool's isError text): say what works instead.
      throw new EdgeError('MCP_EDGE_SESSION_REQUIRED', 'This keeps per-session state, which a stateless (2026-07-28) request does not have: use a client that opens a session (MCP 2025-11-25 or earlier)')
    }
    return {
      id: '',
      protocolVersion: envelope.protocolVersion,
      clientInfo: envelope.clientInfo,
      clientCapabilities: envelope.clientCapabilities,
      resourceUpdated: (uri) => this.resourceUpdated(uri),
      enable: noSession,
      disable: noSession,
      state: { get: noSession, set: noSession, update: noSession },
      register: noSession,
      unregisterTool: noSession,
      unregisterPrompt: noSession,
      unregisterResource: noSession,
      unregisterResourceTemplate: noSession,
      replaceTools: noSession,
      replacePrompts: noSession,
      replaceResources: noSession,
      replaceResourceTemplates: noSession,
      elicit: noSession,
      createMessage: noSession,
      listRoots: noSession,
      ping: noSession,
      log: noSession,
      shutdown: noSession,
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

  /** Tells one session that `list` changed, when the route declares list_changed for it. */
  sessionListChanged(sessionId: string, list: ListName): void {
    if (this.#listChangedDeclared(list)) this.#host.notifier.notifySession(sessionId, notification(`notifications/${list}/list_changed`))
  }

  /** The catalogue calls of one session's view: changes to that session's own catalogue, on every worker. */
  #sessionCatalogue(sessionId: string): SessionCatalogueCalls {
    const catalogues = this.#host.catalogues
    const change = (make: () => CatalogueChange): Promise<boolean> => {
      try {
        return catalogues.changeSession(sessionId, make())
      } catch (error) {
        return Promise.reject(error)
      }
    }
    const entries = (components: readonly ComponentRef[]) => checkedEntries(catalogues.setup, components as readonly Component[])
    const unregister = (kind: ComponentKind) => (name: string) => change(() => ({ op: 'unregister', key: `${kind}:${name}` }))
    const replace = async (kinds: ComponentKind[], components: readonly ComponentRef[]): Promise<void> => {
      await change(() => ({ op: 'replace', kinds, entries: entries(components) }))
    }
    return {
      register: async (...components) => {
        await change(() => ({ op: 'register', entries: entries(components) }))
      },
      unregisterTool: unregister('tool'),
      unregisterPrompt: unregister('prompt'),
      unregisterResource: unregister('resource'),
      unregisterResourceTemplate: unregister('template'),
      replaceTools: (tools) => replace(['tool'], tools),
      replacePrompts: (prompts) => replace(['prompt'], prompts),
      replaceResources: (resources, templates) => replace(templates === undefined ? ['resource'] : ['resource', 'template'], [...resources, ...(templates ?? [])]),
      replaceResourceTemplates: (templates) => replace(['template'], templates),
    }
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

  // The level is read afresh: the client may have changed it since the view was made.
  async #logToSession(sessionId: string, level: LogLevel, data: unknown, logger: string | undefined): Promise<void> {
    this.#host.logToGateway(level, data, logger, sessionId)
    if (!this.#host.logging) return
    const record = await this.#host.store.get(sessionId)
    if (record === undefined || !levelPasses(level, record.logLevel)) return
    const params: JsonObject = { level, data }
    if (logger !== undefined) params.logger = logger
    this.#host.notifier.notifySession(sessionId, notification('notifications/message', params))
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
