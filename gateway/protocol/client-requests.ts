/**
 * Server→client requests (elicitation, sampling, roots, ping): the capability checks and the wait
 * for the client's answer, shared by a request's `ctx` (asking on the request's stream) and a
 * session view (asking on the session's standalone stream, outside any request).
 */
import { EdgeError } from '../wire/errors.ts'
import { checkCreateMessageResult, checkElicitResult, checkRoots, elicitationValidator } from './client-answers.ts'
import type { ClientRequestOptions, UrlElicitation } from '../registry/context.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { AwaitingAnswer } from './live-sessions.ts'
import type {
  ClientCapabilities,
  CreateMessageOptions,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  JsonObject,
  Root,
} from '../wire/mcp-types.ts'

/** Sends a request to the client and resolves with its answer. */
export type Ask = (method: string, params: JsonObject | undefined, options?: ClientRequestOptions) => Promise<unknown>

export interface AskOptions {
  id: string
  method: string
  params: JsonObject | undefined
  options: ClientRequestOptions
  defaultTimeoutMs: number
  /** Where the answer is routed to (the session's awaiting map on this worker). */
  awaiting: Map<string, AwaitingAnswer>
  send: (message: JsonRpcMessage) => void
  /** Gives up (and tells the client) when it fires. */
  signal?: AbortSignal
  /**
   * Where the cancellation goes when `signal` fired: the asking request's stream closes with it, so
   * the client would never hear that its callback may stop (the session's standalone stream). `send` when absent.
   */
  sendWhenAborted?: (message: JsonRpcMessage) => void
  onSettled?: () => void
}

/** Sends one server→client request and waits for the answer, a timeout, or the signal. */
export function askClient(ask: AskOptions): Promise<unknown> {
  const { id, method, options, awaiting, send, signal } = ask
  const timeoutMs = options.timeoutMs ?? ask.defaultTimeoutMs
  const onProgress = options.onProgress
  const body = onProgress === undefined ? ask.params : { ...ask.params, _meta: { progressToken: id } }
  const request: JsonRpcMessage = body === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: body }
  return new Promise<unknown>((resolve, reject) => {
    const settle = (): void => {
      clearTimeout(timer)
      awaiting.delete(id)
      signal?.removeEventListener('abort', onAbort)
      ask.onSettled?.()
    }
    const giveUp = (reason: string, error: Error, via = send): void => {
      settle()
      via(notification('notifications/cancelled', { requestId: id, reason }))
      reject(error)
    }
    const onAbort = (): void =>
      giveUp('the request that asked was cancelled', new EdgeError('MCP_EDGE_REQUEST_CANCELLED', 'Request cancelled'), ask.sendWhenAborted ?? send)
    const timer = setTimeout(
      () => giveUp('timed out', new EdgeError('MCP_EDGE_CLIENT_TIMEOUT', `The client did not answer ${method} within ${timeoutMs} ms`)),
      timeoutMs,
    )
    awaiting.set(id, {
      resolve: (result) => {
        settle()
        resolve(result)
      },
      reject: (error) => {
        settle()
        reject(error)
      },
      progress: (progress, total, message) => {
        if (onProgress?.(progress, total, message) === false) {
          giveUp('cancelled by the server', new EdgeError('MCP_EDGE_REQUEST_CANCELLED', `${method} cancelled`))
        }
      },
    })
    signal?.addEventListener('abort', onAbort, { once: true })
    send(request)
  })
}

// Local errors, not McpError: an uncaught one in a tool becomes an isError result the model can read.
function missingCapability(capability: string): EdgeError {
  return new EdgeError('MCP_EDGE_CLIENT_CAPABILITY_MISSING', `The client did not declare the ${capability} capability`)
}

/** `elicitation/create` in form or URL mode, asked only when the client declared that mode. */
export async function elicit(
  capabilities: ClientCapabilities,
  ask: Ask,
  message: string,
  schema: ElicitationSchema | UrlElicitation,
  options?: ClientRequestOptions,
): Promise<ElicitResult> {
  const elicitation = capabilities.elicitation
  if ('mode' in schema && schema.mode === 'url') {
    if (elicitation?.url === undefined) throw missingCapability('elicitation.url')
    const elicitationId = schema.elicitationId ?? crypto.randomUUID()
    return checkElicitResult(await ask('elicitation/create', { mode: 'url', message, url: schema.url, elicitationId }, options), undefined)
  }
  // `elicitation: {}` means form mode only (the 2025-06-18 shape).
  if (elicitation === undefined || (elicitation.url !== undefined && elicitation.form === undefined)) {
    throw missingCapability('elicitation.form')
  }
  const validate = elicitationValidator(schema as ElicitationSchema)
  return checkElicitResult(await ask('elicitation/create', { message, requestedSchema: schema }, options), validate)
}

/** `sampling/createMessage`; tools in the request need `sampling.tools`. */
export async function createMessage(
  capabilities: ClientCapabilities,
  ask: Ask,
  messages: unknown[],
  maxTokens: number,
  options: CreateMessageOptions & ClientRequestOptions = {},
): Promise<CreateMessageResult> {
  const sampling = capabilities.sampling
  if (sampling === undefined) throw missingCapability('sampling')
  if ((options.tools !== undefined || options.toolChoice !== undefined) && sampling.tools === undefined) {
    throw missingCapability('sampling.tools')
  }
  const { timeoutMs, onProgress, key, ...rest } = options
  void key
  return checkCreateMessageResult(await ask('sampling/createMessage', { ...rest, messages, maxTokens }, { timeoutMs, onProgress }))
}

/** `roots/list`, the client's roots. */
export async function listRoots(capabilities: ClientCapabilities, ask: Ask, options?: ClientRequestOptions): Promise<Root[]> {
  if (capabilities.roots === undefined) throw missingCapability('roots')
  return checkRoots(await ask('roots/list', undefined, options))
}
