/**
 * Requests refused before the route's dispatch (the access phase: credentials, the access module,
 * component scopes; the rate limits and quotas) make no CallRecord: this names them to the call events'
 * subscribers (the audit record), with the rule that decided. One boolean test when nobody subscribes.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Caller } from '../wire/caller.ts'
import type { EdgeError } from '../wire/errors.ts'
import type { JsonRpcRequest } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { LimitAnswer } from '../edge/limits.ts'
import type { RouteCalls } from './call-events.ts'

/** The rule a limit's refusal names: a per-session concurrency quota, or a rate limit. */
export function limitDecision(answer: LimitAnswer): string {
  return answer.kind === 'busy' ? 'quota' : 'rate_limit'
}

/**
 * The rule an access phase refusal names: `authentication` (no credential, a bad one, or none can be
 * checked now), a component's `scope`, or the access phase itself (`access`: the route's principals,
 * its scopes, the access module).
 */
export function accessDecision(refusal: EdgeError | { code: string }): string {
  switch (refusal.code) {
    case 'MCP_EDGE_UNAUTHORIZED': case 'MCP_EDGE_AUTH_UNAVAILABLE': return 'authentication'
    case 'MCP_EDGE_INSUFFICIENT_SCOPE': return 'scope'
    default: return 'access'
  }
}

/**
 * Tells the subscribers of `calls` that `method` was refused by `decision` (`toolResult`: answered as
 * an isError result, a per-tool limit). `session` '' for none.
 */
export function refusedCall(calls: RouteCalls | undefined, method: string | undefined, params: JsonObject | undefined, session: string | undefined, caller: Caller | undefined, decision: string, message: string, toolResult = false): void {
  if (calls === undefined || method === undefined || !calls.subscribed) return
  const named = params?.name ?? params?.uri
  const request: JsonRpcRequest | undefined = params === undefined ? undefined : { jsonrpc: '2.0', id: 0, method, params }
  calls.refused(method, typeof named === 'string' ? named : undefined, toolResult ? 'tool_error' : 'refused', message, { session: session ?? '', caller, decision, request })
}

/**
 * Tells the subscribers of `calls` that a request was refused by `decision` before its body was read
 * (`authentication`: no credential or a bad one; `access`; `origin`; `media_type`; `body_limit`).
 * Its method and arguments are unknown, and stay so: a body is never read only to be audited.
 * `principal`: the identity its credential proved, when it did. One boolean test when nobody subscribes.
 */
export function refusedUnread(calls: RouteCalls | undefined, headers: IncomingHttpHeaders, decision: string, message: string, principal?: string): void {
  if (calls === undefined || !calls.subscribed) return
  const session = headers['mcp-session-id']
  calls.refusedUnread(message, { session: typeof session === 'string' ? session : '', principal, decision })
}
