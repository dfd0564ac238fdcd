/**
 * A session (2025-11-25) client's request through a proxy route to an upstream that speaks only
 * 2026-07-28 (no initialize): the request goes up stateless with an envelope made from the session
 * (its client capabilities, info and log level), and each input-required result is asked of the
 * client as server→client requests on the request's own stream, then the call is retried with the
 * answers and the upstream's requestState, up to `max_input_rounds` times.
 *
 *   tools/call ─► upstream (stateless) ─► input_required {inputRequests, requestState}
 *        ▲                                     │ each: elicitation/create, sampling/createMessage, roots/list
 *        │                                     ▼        on the client's stream (its answer may reach any worker)
 *        └──── retry: inputResponses + requestState ◄── answers
 */
import type { Caller } from '../wire/caller.ts'
import { randomUUID } from 'node:crypto'
import { RpcError } from '../client/errors.ts'
import type { UpstreamConfig } from '../config/types.ts'
import type { RequestContext } from '../registry/context.ts'
import type { SessionRecord } from '../store/store.ts'
import { ClientAnswerError, McpError, RpcCode } from '../wire/errors.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import type { ElicitationSchema, JsonObject, SamplingMessage } from '../wire/mcp-types.ts'
import { toSessionError } from './cross-era-errors.ts'
import { keepHints, ownHints } from '../wire/cache-hints.ts'
import { relayToRequest } from './relay.ts'
import type { StatelessUpstream } from './stateless-upstream.ts'

const VERSION = '2026-07-28'
/** Keys a 2026-07-28 result has that a 2025 client does not know. */
const MODERN_KEYS = ['resultType', 'ttlMs', 'cacheScope'] as const

/** The session's request as a stateless one, rounds asked of the client; rejects with the upstream's error in 2025 terms. */
export async function statelessForSession(
  stateless: StatelessUpstream,
  upstream: UpstreamConfig,
  record: SessionRecord,
  method: string,
  params: JsonObject,
  ctx: RequestContext | undefined,
  timeoutMs: number,
  paramHeaders: Record<string, string> | undefined,
  who: Caller | undefined,
): Promise<JsonObject> {
  const meta: JsonObject = {
    ...(params._meta as JsonObject | undefined),
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientCapabilities': record.clientCapabilities as JsonObject,
  }
  if (record.clientInfo !== undefined) meta['io.modelcontextprotocol/clientInfo'] = record.clientInfo as unknown as JsonObject
  if (record.logLevel !== undefined) meta['io.modelcontextprotocol/logLevel'] = record.logLevel
  const base: JsonObject = { ...params, _meta: meta }
  const onMessage = ctx === undefined ? undefined : (message: JsonRpcMessage) => relayToRequest(upstream.name, message, ctx)
  let sent = base
  for (let round = 0; ; round++) {
    let result: JsonObject
    try {
      result = await stateless.request(method, sent, { timeoutMs, signal: ctx?.signal, paramHeaders, onMessage, who })
    } catch (error) {
      throw error instanceof RpcError ? toSessionError(error, method, upstream.name) : error
    }
    if (result.resultType !== 'input_required') return legacyResult(result)
    if (ctx === undefined) throw new McpError(RpcCode.InternalError, `Upstream "${upstream.name}" asked for input where no client can answer (${method})`)
    if (round >= upstream.max_input_rounds) {
      throw new McpError(RpcCode.InternalError, `Upstream "${upstream.name}" asked for input more than ${upstream.max_input_rounds} times in one call (upstreams[].max_input_rounds)`)
    }
    const asked = Object.entries((result.inputRequests ?? {}) as JsonObject)
    const answers = await Promise.all(asked.map(([, request]) => ask(ctx, request as { method?: unknown; params?: JsonObject })))
    const inputResponses: JsonObject = {}
    asked.forEach(([key], n) => (inputResponses[key] = answers[n]!))
    sent = { ...base, inputResponses }
    if (typeof result.requestState === 'string') sent.requestState = result.requestState
  }
}

/** One input request asked of the session client, on the request's stream; its refusal fails the call. */
async function ask(ctx: RequestContext, request: { method?: unknown; params?: JsonObject }): Promise<JsonObject> {
  const params = request.params ?? {}
  try {
    switch (request.method) {
      case 'elicitation/create': {
        const message = String(params.message ?? '')
        // 2026 dropped elicitationId; a 2025 client needs one for its URL elicitation.
        const target = params.mode === 'url'
          ? { mode: 'url' as const, url: String(params.url), elicitationId: randomUUID() }
          : (params.requestedSchema as ElicitationSchema)
        return (await ctx.elicit(message, target)) as unknown as JsonObject
      }
      case 'sampling/createMessage': {
        const { messages, maxTokens, ...rest } = params
        return (await ctx.createMessage(messages as SamplingMessage[], maxTokens as number, rest as JsonObject)) as unknown as JsonObject
      }
      case 'roots/list':
        return { roots: await ctx.listRoots() } as unknown as JsonObject
      default:
        throw new McpError(RpcCode.InternalError, `The upstream asked for an input this gateway cannot ask a client: ${String(request.method)}`)
    }
  } catch (error) {
    if (error instanceof McpError) throw error
    if (error instanceof ClientAnswerError) throw new McpError(error.code, error.message, error.data)
    throw error
  }
}

/** A complete 2026 result as a 2025 client reads it. */
function legacyResult(result: JsonObject): JsonObject {
  // The hints stay beside the result: the list cache and the route's own hints follow them (wire/cache-hints.ts).
  if (result.ttlMs !== undefined || result.cacheScope !== undefined) keepHints(result, ownHints(result))
  for (const key of MODERN_KEYS) delete result[key]
  return result
}
