/**
 * Error codes across the two eras, for a proxied call whose client and upstream speak different
 * revisions:
 *
 *   2026-07-28 upstream → 2025-11-25 session client
 *     -32021 MissingRequiredClientCapability → -32000 (what a 2025 route answers when a tool needs a
 *            capability the client did not declare), message and data kept
 *     -32020 HeaderMismatch, -32022 UnsupportedVersion → -32603: the gateway's own request was refused,
 *            nothing the client can fix (the upstream's words stay in the message)
 *     -32602 with data.uri on resources/read → -32002 ResourceNotFound (SEP-2164 the other way)
 *
 *   2025-11-25 upstream → 2026-07-28 stateless client
 *     -32002 ResourceNotFound → -32602 (done for every stateless answer by the dispatcher)
 *     -32042 URLElicitationRequired → an input-required result asking the URL elicitations (removed
 *            from 2026-07-28: the client learns the outcome by retrying, and the retry calls again)
 */
import { RpcError } from '../client/errors.ts'
import { EdgeCode, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

/** A 2026-07-28 upstream's error as a 2025-11-25 client expects it. */
export function toSessionError(error: RpcError, method: string, upstream: string): RpcError {
  switch (error.code) {
    case RpcCode.MissingCapability:
      return new RpcError(EdgeCode.MCP_EDGE_CLIENT_CAPABILITY_MISSING.rpc, error.message, error.data)
    case RpcCode.HeaderMismatch:
    case RpcCode.UnsupportedVersion:
      return new RpcError(RpcCode.InternalError, `Upstream "${upstream}" refused the gateway's request: ${error.message}`)
    case RpcCode.InvalidParams: {
      const uri = (error.data as { uri?: unknown } | undefined)?.uri
      return method === 'resources/read' && typeof uri === 'string' ? new RpcError(RpcCode.ResourceNotFound, error.message, error.data) : error
    }
    default:
      return error
  }
}

/** Input requests of URL elicitations keyed `url-<n>`, from a -32042 error's `data.elicitations`; undefined when it has none. */
export function urlElicitations(data: unknown): JsonObject | undefined {
  const list = (data as { elicitations?: unknown } | undefined)?.elicitations
  if (!Array.isArray(list) || list.length === 0) return undefined
  const inputRequests: JsonObject = {}
  list.forEach((item: unknown, n) => {
    const { url, message } = (item ?? {}) as { url?: unknown; message?: unknown }
    if (typeof url !== 'string') return
    inputRequests[`url-${n}`] = { method: 'elicitation/create', params: { mode: 'url', message: String(message ?? ''), url } }
  })
  return Object.keys(inputRequests).length === 0 ? undefined : inputRequests
}

/** True when every URL elicitation of the previous round was accepted (else the client gave up on it). */
export function urlAccepted(inputResponses: unknown): boolean {
  if (typeof inputResponses !== 'object' || inputResponses === null) return false
  const answers = Object.entries(inputResponses as JsonObject).filter(([key]) => key.startsWith('url-'))
  return answers.length > 0 && answers.every(([, answer]) => (answer as { action?: unknown } | null)?.action === 'accept')
}
