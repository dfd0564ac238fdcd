/**
 * The hot path of Streamable HTTP, served beside Fastify rather than through it: a POST of one
 * JSON-RPC request on an open session, or a stateless (2026-07-28) one. Fastify's request pipeline
 * (its request and reply objects, hook runners, content-type parser, response listeners) costs about
 * 10,000 instructions per request, 7% of a tools/call on the default config, and this path needs
 * none of it. Everything else, and every request that is not exactly this, is Fastify's, unchanged.
 *
 *   request ─► HotPosts (POST on a route's exact location?) ─✗─► Fastify
 *                 │ HotPost.take: the headers Fastify's hooks would pass (Host, Origin, Accept,
 *                 │ Content-Type), a session id or a version, a Content-Length within body_limit,
 *                 │ a credential already known (edge/hot-access.ts) ─✗─► Fastify
 *                 ▼ body read
 *              one request, valid JSON; stateless, or a session this process holds with a supported
 *              protocol version ─✗─► Fastify, with the body it was sent (replayed)
 *                 ▼ (from here nothing goes back)
 *              access module and component scopes ─► rate limits and session slot ─► the endpoint
 *              (PostExchange: JSON, or SSE) or the stateless wire (stateless-post.ts)
 *
 * The checks and answers are the ones http-post.ts makes, in its order; a refusal goes through the
 * error table (writeError), a failure through `failureRefusal` as Fastify's error handler sends it.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Readable } from 'node:stream'
import type { Logger } from 'pino'
import { addCorsHeaders } from '../edge/cors.ts'
import { limitRefusal, toolLimitResult, type LimitAnswer, type LimitOutcome } from '../edge/limits.ts'
import { hasDuplicateHost, type OriginPolicy } from '../edge/origin-check.ts'
import type { SessionRecord } from '../store/store.ts'
import { openCaller, type Caller } from '../wire/caller.ts'
import { calledTool } from '../wire/called-tool.ts'
import { EdgeError } from '../wire/errors.ts'
import { HotRefusal, type EarlyAccess, type HotAccess } from '../edge/hot-access.ts'
import { classify, resultMessage, type Incoming, type JsonRpcRequest } from '../wire/jsonrpc.ts'
import { isSupportedVersion } from '../wire/versions.ts'
import { failureRefusal } from './failure-refusal.ts'
import { accessDecision, limitDecision, refusedCall } from '../events/refused-call.ts'
import { accepts, type HttpRoute } from './http-route.ts'
import { parseMessageText, type JsonBounds } from './json-text.ts'
import { PostExchange } from './post-exchange.ts'
import { writeError } from './reply-error.ts'
import { wayOf, type Way } from './session-door.ts'
import { statelessPost } from './stateless-post.ts'
import { RESERVED } from '../protocol/session-lifecycle.ts'

/**
 * The Accept header the official SDKs send: compared whole, it needs none of `accepts`' four substring
 * searches (~700 instructions a request in callgrind).
 */
const USUAL_ACCEPT = 'application/json, text/event-stream'

/** The body of a request the hot path read and handed back to Fastify, replayed by `replayedBody`. */
const READ_BODY = Symbol('mcp-edge.readBody')
type ReadRequest = IncomingMessage & { [READ_BODY]?: Buffer }

/**
 * For Fastify's preParsing hook: the body of a request the hot path read before handing it back, as
 * a stream Fastify reads (and bounds, and parses) as it reads any body; undefined for any other request.
 */
export function replayedBody(raw: IncomingMessage): Readable | undefined {
  const body = (raw as ReadRequest)[READ_BODY]
  if (body === undefined) return undefined
  ;(raw as ReadRequest)[READ_BODY] = undefined
  return Readable.from([body], { objectMode: false })
}

/**
 * A Content-Length's value as a number, or NaN: llhttp has already refused any value that is not
 * digits, so a short one is read digit by digit (Number() of the string was ~300 instructions of a
 * request); one of more than 15 digits (past any body_limit) goes to Number().
 */
function contentLength(value: string): number {
  if (value.length === 0 || value.length > 15) return Number(value)
  let bytes = 0
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30
    if (digit < 0 || digit > 9) return Number.NaN
    bytes = bytes * 10 + digit
  }
  return bytes
}

/**
 * Each connection's remote address, read once: `socket.remoteAddress` goes through Node's
 * `_getpeername`, whose property loads are megamorphic (~500 instructions a read in callgrind), on
 * every request of a keep-alive connection. Entries go with their sockets.
 */
const peers = new WeakMap<Socket, string>()

function peerAddress(socket: Socket): string {
  let address = peers.get(socket)
  if (address === undefined) {
    address = socket.remoteAddress ?? ''
    // Not kept before the socket knows its peer (undefined while it connects; a closed one stays '').
    if (address !== '') peers.set(socket, address)
  }
  return address
}

/** The hot paths of one gateway (one generation), by route location. */
export class HotPosts {
  readonly #routes = new Map<string, HotPost>()
  #open = true
  /** Requests the hot path answered itself (not handed to Fastify): what tests and diagnostics read. */
  served = 0

  add(location: string, post: HotPost): void {
    this.#routes.set(location, post)
  }

  /** Once the app closes, every request is Fastify's (which answers 503 while it closes). */
  close(): void {
    this.#open = false
  }

  /** Fastify's request listener, with the hot path in front of it. */
  listener(fastify: RequestListener): RequestListener {
    return (request, response) => {
      if (request.method === 'POST' && this.#open) {
        const post = this.#routes.get(request.url!)
        if (post !== undefined && post.take(request, response, fastify)) return
      }
      fastify(request, response)
    }
  }
}

/** What a route's hot path needs beyond its HttpRoute. */
export interface HotPostOptions {
  policy: OriginPolicy
  /** The route's access phase; undefined on an open route. */
  access?: HotAccess
  bodyLimit: number
  jsonBounds: JsonBounds
  logger: Logger
}

/** The hot path of one route; not for routes with trusted proxies or per-caller rate rules (see server.ts). */
export class HotPost {
  readonly #http: HttpRoute
  readonly #options: HotPostOptions
  readonly #posts: HotPosts

  constructor(posts: HotPosts, http: HttpRoute, options: HotPostOptions) {
    this.#posts = posts
    this.#http = http
    this.#options = options
  }

  /** True when the request is taken (answered here, or handed to `fastify` once its body is read). */
  take(request: IncomingMessage, response: ServerResponse, fastify: RequestListener): boolean {
    // Read once and handed on: `request.headers` is a getter whose symbol-keyed load is megamorphic
    // in Node's code (~150 instructions a read).
    const headers = request.headers
    const length = headers['content-length']
    // A session's request names it; a stateless one (2026-07-28) names its version.
    if (length === undefined || headers['transfer-encoding'] !== undefined || (headers['mcp-session-id'] === undefined && headers['mcp-protocol-version'] === undefined)) return false
    const bytes = contentLength(length)
    if (!(bytes > 0 && bytes <= this.#options.bodyLimit)) return false
    const type = headers['content-type']
    if (type === undefined || !type.startsWith('application/json')) return false
    const accept = headers.accept
    if (accept !== USUAL_ACCEPT && (!accepts(accept, 'application/json', 'application') || !accepts(accept, 'text/event-stream', 'text'))) return false
    if (!this.#options.policy.allows(headers.host, headers.origin) || hasDuplicateHost(request.rawHeaders)) return false
    let early: EarlyAccess | undefined
    if (this.#options.access !== undefined) {
      early = this.#options.access.early(headers, peerAddress(request.socket))
      if (early === undefined) return false
    }
    let first: Buffer | undefined
    let more: Buffer[] | undefined
    request.on('data', (chunk: Buffer) => {
      if (first === undefined) first = chunk
      else (more ??= [first]).push(chunk)
    })
    request.on('end', () => {
      const body = more !== undefined ? Buffer.concat(more) : (first ?? Buffer.alloc(0))
      if (this.#serve(request, headers, response, body, early)) this.#posts.served++
      else {
        ;(request as ReadRequest)[READ_BODY] = body
        fastify(request, response)
      }
    })
    return true
  }

  /** Serves the read request; false (having done nothing) when it is not the hot path's. */
  #serve(request: IncomingMessage, headers: IncomingHttpHeaders, response: ServerResponse, body: Buffer, early: EarlyAccess | undefined): boolean {
    let incoming: Incoming
    let way: Way
    let sessionId: string | undefined
    try {
      const message = parseMessageText(body.toString(), this.#options.jsonBounds)
      if (typeof message !== 'object' || message === null || Array.isArray(message)) return false
      incoming = classify(message)
      if (incoming.kind !== 'request') return false
      // Node joins a repeated header of these kinds with ", ": a string, or absent.
      const version = headers['mcp-protocol-version'] as string | undefined
      sessionId = headers['mcp-session-id'] as string | undefined
      way = wayOf(incoming, message, sessionId !== undefined, version)
      if (way === 'initialize' || (way === 'session' && (sessionId === undefined || (version !== undefined && !isSupportedVersion(version))))) return false
    } catch {
      return false
    }
    const http = this.#http
    let record: SessionRecord | undefined
    if (way === 'session') {
      record = http.endpoint.store.peek(sessionId!)
      // Unknown here, or another route's: Fastify's path says so (or asks the store). On an open route a
      // session with an owner is not this caller's either.
      // A session an HTTP+SSE stream reserved and no initialize has made yet: Fastify's path refuses it.
      if (record === undefined || record.route !== http.endpoint.route.location || (early === undefined && record.principal !== undefined) || record.protocolVersion === RESERVED) return false
    }
    const origin = headers.origin
    if (origin !== undefined) addCorsHeaders(response, origin, 'POST')
    const message = incoming.message as JsonRpcRequest
    const address = peerAddress(request.socket)
    try {
      if (early === undefined) {
        this.#admitted(request, response, record, message, openCaller(address))
        return true
      }
      const decided = this.#options.access!.late(early, { headers, address, method: message.method, params: message.params })
      if (decided instanceof Promise) decided.then((caller) => this.#admitted(request, response, record, message, caller), (error: unknown) => this.#fail(response, error, message))
      else this.#admitted(request, response, record, message, decided)
    } catch (error) {
      this.#fail(response, error, message)
    }
    return true
  }

  /** Past the access phase (`caller`, or its refusal): the limits, then the session's endpoint (no session: stateless). */
  #admitted(request: IncomingMessage, response: ServerResponse, record: SessionRecord | undefined, message: JsonRpcRequest, caller: Caller | HotRefusal): void {
    const http = this.#http
    if (caller instanceof HotRefusal) {
      refusedCall(http.endpoint.calls, message.method, message.params, record?.id, caller.caller, accessDecision(caller.error), caller.error.message)
      return writeError(response, caller.error, message.id)
    }
    const started = http.log.start()
    try {
      const limits = http.limits
      if (limits === undefined) {
        this.#dispatch(request, response, record, message, started, caller, undefined)
        return
      }
      const name = message.method === 'tools/call' ? calledTool(message.params, http.endpoint.route.catalogue === 'search') : undefined
      const outcome = limits.check(limits.needsCaller ? caller : undefined, record?.id, name)
      if (outcome instanceof Promise) {
        outcome.then((settled) => this.#limited(request, response, record, message, started, caller, settled), (error: unknown) => this.#fail(response, error, message))
      } else {
        this.#limited(request, response, record, message, started, caller, outcome)
      }
    } catch (error) {
      this.#fail(response, error, message)
    }
  }

  #limited(request: IncomingMessage, response: ServerResponse, record: SessionRecord | undefined, message: JsonRpcRequest, started: number, caller: Caller, outcome: LimitOutcome): void {
    const http = this.#http
    if (outcome === false) return void this.#dispatch(request, response, record, message, started, caller, undefined)
    if (outcome === true) {
      let running
      try {
        running = this.#dispatch(request, response, record, message, started, caller, undefined)
      } finally {
        // True only for a request holding its session's slot.
        if (running === undefined) http.limits!.done(record!.id)
      }
      void running?.finally(() => http.limits!.done(record!.id)).catch(() => undefined)
      return
    }
    if (outcome.kind === 'tool') return void this.#dispatch(request, response, record, message, started, caller, outcome)
    const refusal = limitRefusal(outcome)
    refusedCall(http.endpoint.calls, message.method, message.params, record?.id, caller, limitDecision(outcome), refusal.message)
    writeError(response, refusal, message.id)
    http.log.end(started, message.method, refusal.status, undefined)
  }

  /** The request to its session's endpoint; the promise of a request still running. */
  #dispatch(request: IncomingMessage, response: ServerResponse, record: SessionRecord | undefined, message: JsonRpcRequest, started: number, caller: Caller, toolLimit: LimitAnswer | undefined): Promise<void> | undefined {
    const http = this.#http
    if (record === undefined) {
      const running = statelessPost(request.headers, response, caller, { kind: 'request', message }, http.stateless, toolLimit)
      return running?.catch((error: unknown) => this.#fail(response, error, message))
    }
    // Another principal's session is as unknown as one that never existed (http-route.ts says why).
    if (record.principal !== caller.principal) {
      writeError(response, new EdgeError('MCP_EDGE_SESSION_NOT_FOUND'), message.id)
      return undefined
    }
    const exchange = new PostExchange(response, record.id, message.method, started, http.exchanges, message.id, record.principal)
    if (toolLimit !== undefined) {
      refusedCall(http.endpoint.calls, message.method, message.params, record.id, caller, 'rate_limit', 'over a tool\'s rate limit', true)
      exchange.respond(resultMessage(message.id, toolLimitResult(toolLimit)))
      return undefined
    }
    http.endpoint.store.touch(record.id)
    // serveSession's request case, without its Incoming and sink closure made anew for each request.
    const running = http.endpoint.handleRequest(record, message, exchange, caller, request.headers)
    return running?.catch((error: unknown) => this.#fail(response, error, message))
  }

  /** A failure Fastify's error handler would have answered: the same answer, or the connection cut once answering began. */
  #fail(response: ServerResponse, error: unknown, message: JsonRpcRequest): void {
    const refusal = failureRefusal(error, this.#options.logger, { url: this.#http.endpoint.route.location, method: message.method })
    if (response.headersSent) response.destroy()
    else writeError(response, refusal, message.id)
  }
}
