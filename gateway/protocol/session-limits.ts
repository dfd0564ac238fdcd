/**
 * The bounds on what one session (or one stateless listen stream) may make the gateway keep: the
 * client's capabilities and clientInfo as stored at initialize, its subscriptions, the components
 * hidden from it. Each refusal is -32602 naming the `limits.*` key, so an operator reading a client's
 * error knows what to raise. Counts are enforced by the store itself (`SessionChange.max`), so
 * concurrent requests cannot overshoot them.
 */
import type { LimitsConfig } from '../config/types.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

function refused(message: string): McpError {
  return new McpError(RpcCode.InvalidParams, message)
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '')
}

/** Throws -32602 when an initialize's capabilities or clientInfo are larger than a session may keep. */
export function checkInitializeSizes(params: JsonObject, limits: LimitsConfig): void {
  if (params.capabilities !== undefined) {
    const bytes = jsonBytes(params.capabilities)
    if (bytes > limits.client_capabilities) {
      throw refused(`params.capabilities is ${bytes} bytes; a session keeps at most ${limits.client_capabilities} (limits.client_capabilities)`)
    }
  }
  if (params.clientInfo !== undefined) {
    const bytes = jsonBytes(params.clientInfo)
    if (bytes > limits.client_info) throw refused(`params.clientInfo is ${bytes} bytes; a session keeps at most ${limits.client_info} (limits.client_info)`)
  }
}

/** Throws -32602 for a URI longer than a subscription may be. */
export function checkSubscriptionUri(uri: string, limits: LimitsConfig): void {
  if (uri.length > limits.uri_length) {
    throw refused(`the URI is ${uri.length} characters; subscriptions take at most ${limits.uri_length} (limits.uri_length)`)
  }
}

/** The refusal of a subscription over the session's count. */
export function tooManySubscriptions(limits: LimitsConfig): McpError {
  return refused(`this session already holds ${limits.subscriptions} subscriptions (limits.subscriptions); unsubscribe from one first`)
}

/** Throws -32602 when a listen stream asks for more, or longer, resource subscriptions than a session may hold. */
export function checkListenSubscriptions(uris: readonly string[], limits: LimitsConfig): void {
  if (uris.length > limits.subscriptions) {
    throw refused(`${uris.length} resource subscriptions asked; a stream holds at most ${limits.subscriptions} (limits.subscriptions)`)
  }
  for (const uri of uris) checkSubscriptionUri(uri, limits)
}

/** The refusal of a component hidden over the session's count. */
export function tooManyHidden(limits: LimitsConfig): McpError {
  return refused(`this session already has ${limits.hidden_components} components disabled (limits.hidden_components)`)
}
