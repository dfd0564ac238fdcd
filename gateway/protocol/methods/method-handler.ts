/**
 * What a method handler is and the little it sees of its route: the registry, the session store's
 * update, and route events. Not the endpoint: the endpoint (and the stateless dispatcher) call the
 * handlers, so the handlers must not know them.
 */
import type { ComponentScopes } from '../../registry/component-scopes.ts'
import type { RequestContext } from '../../registry/context.ts'
import type { LimitsConfig } from '../../config/types.ts'
import type { FailureLog } from '../../registry/failure-report.ts'
import type { Registry } from '../../registry/registry.ts'
import type { RouteEvent } from '../../registry/route-server-api.ts'
import type { SessionRecord, SessionStore } from '../../store/store.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { TaskService } from '../../tasks/task-service.ts'
import type { ResultCache } from '../../registry/result-cache.ts'

/** The route as a method handler sees it. */
export interface MethodHost {
  /** The route's catalogue as every session without one of its own sees it. */
  readonly registry: Registry
  /** The catalogue `record`'s session sees: the route's, or its own (`ctx.session.register`). */
  viewOf(record: SessionRecord): Registry
  /** Session changes a method makes (log level, subscriptions) go through the store. */
  readonly store: Pick<SessionStore, 'update'>
  /** Which components need which scopes (the route's `scopes`); undefined when none do. */
  readonly scopes: ComponentScopes | undefined
  /** Tells the handler module's listeners (resources/subscribe, …). */
  emit(event: RouteEvent, record: SessionRecord, params: JsonObject): void
  /** The bounds on what a session may keep (subscriptions). */
  readonly route: { readonly limits: LimitsConfig }
  /** Where a handler's unexpected failures are logged (with the reference the client sees). */
  readonly logger: FailureLog
  /** The route's tasks (`tasks.enabled`); undefined when it has none. */
  readonly tasks?: TaskService
  /** Cached results of tools that declare `cache:` (registry/result-cache.ts); undefined: none are cached. */
  readonly results?: ResultCache
}

/**
 * One JSON-RPC method: its params in, its result `R` out (synchronously when it can: the hot path
 * makes no promise for a tool that returns a value). Throws McpError for a JSON-RPC error.
 */
export type MethodHandler<R extends JsonObject = JsonObject> = (
  host: MethodHost,
  record: SessionRecord,
  params: JsonObject,
  ctx: RequestContext,
) => R | Promise<R>

/** A family of methods by JSON-RPC name. */
export type MethodTable = Record<string, MethodHandler>
