/**
 * POST on a Streamable HTTP route: one JSON-RPC message through the rate limits, then the session
 * front door. A request is answered by its PostExchange (JSON, or SSE once something comes before
 * the result); a notification or a response is accepted with 202.
 *
 *   classify ─► limits (429; a session slot held until the answer; a tool over its limit: isError)
 *            ─► way: stateless ─► stateless-post │ initialize ─► openSession (+ sessions_per_principal)
 *                    │ session ─► sessionFor ─► serveSession
 */
import { limitDecision, refusedCall } from '../events/refused-call.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { callerOf } from '../edge/access-hook.ts'
import { limitRefusal, sessionQuotaRefusal, toolLimitResult, type LimitAnswer, type LimitOutcome } from '../edge/limits.ts'
import type { SessionRecord } from '../store/store.ts'
import { calledTool } from '../wire/called-tool.ts'
import { type McpError, refusalOf } from '../wire/errors.ts'
import { classify, idOf, resultMessage, type Incoming, type JsonRpcRequest } from '../wire/jsonrpc.ts'
import { header, type HttpRoute } from './http-route.ts'
import { serveBatch } from './http-batch.ts'
import { PostExchange } from './post-exchange.ts'
import { replyError } from './reply-error.ts'
import { initializeRefusal, openSession, serveSession, wayOf } from './session-door.ts'
import { statelessPost } from './stateless-post.ts'

/** For a promise whose rejection its caller already handles (Fastify routes the request's own). */
function ignore(): void {}

/** The tool a tools/call names, when it names one. */
function toolOf(incoming: Incoming, search: boolean): string | undefined {
  if (incoming.kind !== 'request' || incoming.message.method !== 'tools/call') return undefined
  return calledTool(incoming.message.params, search)
}

/** Serves POST on the route's location. */
export function registerPost(app: FastifyInstance, http: HttpRoute): void {
  const { endpoint, log, exchanges, limits } = http
  const search = endpoint.route.catalogue === 'search'

  // Not an async function: a tools/call whose tool is synchronous is answered before this returns,
  // with no promise made for it. Slower paths return theirs (Fastify routes their rejections).
  app.post(endpoint.route.location, (request, reply) => {
    const started = log.start()
    if (Array.isArray(request.body)) return serveBatch(http, request, reply, request.body as unknown[], started)
    let incoming
    try {
      incoming = classify(request.body)
    } catch (error) {
      replyError(reply, refusalOf(error as McpError), idOf(request.body))
      return undefined
    }
    const sessionId = header(request, 'mcp-session-id')
    if (limits === undefined) return post(request, reply, incoming, sessionId, started, undefined)
    // Only requests hold a slot of their session: notifications and answers are done at once.
    const slot = incoming.kind === 'request' ? sessionId : undefined
    const outcome = limits.check(limits.needsCaller ? callerOf(request) : undefined, slot, toolOf(incoming, search))
    if (outcome instanceof Promise) return outcome.then((settled) => limited(request, reply, incoming, sessionId, started, settled))
    return limited(request, reply, incoming, sessionId, started, outcome)
  })

  /** A POST once the limits have spoken: refused, served, or served holding a session slot given back at its end. */
  function limited(request: FastifyRequest, reply: FastifyReply, incoming: Incoming, sessionId: string | undefined, started: number, outcome: LimitOutcome): Promise<unknown> | undefined {
    if (outcome === false) return post(request, reply, incoming, sessionId, started, undefined)
    if (outcome === true) {
      // No closure unless the request is still running on return: a synchronous tools/call (the hot
      // path) gives its slot back here, and a named closure costs a property definition per request
      // under tsx (esbuild's keepNames).
      let running
      try {
        running = post(request, reply, incoming, sessionId, started, undefined)
      } catch (error) {
        limits!.done(sessionId!)
        throw error
      }
      if (running === undefined) limits!.done(sessionId!)
      else void running.finally(() => limits!.done(sessionId!)).catch(ignore)
      return running
    }
    if (outcome.kind === 'tool') return post(request, reply, incoming, sessionId, started, outcome)
    if (incoming.kind === 'request') refusedCall(endpoint.calls, incoming.message.method, incoming.message.params, sessionId, callerOf(request), limitDecision(outcome), limitRefusal(outcome).message)
    http.refuse(reply, outcome, idOf(incoming.message), started, incoming.kind === 'request' ? incoming.message.method : incoming.kind)
    return undefined
  }

  /** A POST past the limits, through the front door; `toolLimit` set when its tools/call is over its tool's limit. */
  function post(request: FastifyRequest, reply: FastifyReply, incoming: Incoming, sessionId: string | undefined, started: number, toolLimit: LimitAnswer | undefined): Promise<unknown> | undefined {
    switch (wayOf(incoming, request.body, sessionId !== undefined, header(request, 'mcp-protocol-version'))) {
      case 'stateless':
        return statelessPost(request.headers, reply, callerOf(request), incoming, http.stateless, toolLimit)
      case 'initialize':
        return initialize(incoming.message as JsonRpcRequest, request, reply, started)
      case 'session': {
        const found = http.sessionFor(request, reply, idOf(incoming.message), sessionId)
        if (found instanceof Promise) return found.then((record) => serve(record, incoming, request, reply, started, toolLimit))
        return serve(found, incoming, request, reply, started, toolLimit)
      }
    }
  }

  /** A session's message, once its record is known (undefined: the reply already says why not). */
  function serve(record: SessionRecord | undefined, incoming: Incoming, request: FastifyRequest, reply: FastifyReply, started: number, toolLimit?: LimitAnswer): Promise<unknown> | undefined {
    if (record === undefined) return undefined
    if (toolLimit !== undefined && incoming.kind === 'request') {
      refusedCall(endpoint.calls, incoming.message.method, incoming.message.params, record.id, callerOf(request), 'rate_limit', 'over a tool\'s rate limit', true)
      const exchange = new PostExchange(reply, record.id, incoming.message.method, started, exchanges, incoming.message.id, record.principal)
      exchange.respond(resultMessage(incoming.message.id, toolLimitResult(toolLimit)))
      return undefined
    }
    const running = serveSession(endpoint, record, incoming, (message) => new PostExchange(reply, record.id, message.method, started, exchanges, message.id, record.principal), callerOf(request), request.headers)
    if (incoming.kind === 'request') return running
    const accepted = (): void => {
      log.end(started, incoming.kind === 'notification' ? incoming.message.method : 'response', 202, record.id, undefined, record.principal)
      reply.code(202).send()
    }
    if (running === undefined) return void accepted()
    return running.then(accepted)
  }

  async function initialize(request: JsonRpcRequest, http: FastifyRequest, reply: FastifyReply, started: number): Promise<FastifyReply> {
    const opened = await openSession(endpoint, request, callerOf(http), endpoint.logger, limits)
    if (opened.refusal !== undefined) return replyError(reply, opened.refusal, request.id)
    const { record, response } = opened
    if (limits !== undefined) {
      let admitted
      try {
        admitted = await admit(record, http)
      } catch (error) {
        return replyError(reply, initializeRefusal(error, endpoint.logger), request.id)
      }
      if (!admitted) {
        const refusal = sessionQuotaRefusal(limits.sessionsPerPrincipal)
        log.end(started, 'initialize', refusal.status, undefined)
        return replyError(reply, refusal, request.id)
      }
    }
    log.end(started, 'initialize', 200, record.id, undefined, record.principal)
    return reply.code(200).header('content-type', 'application/json').header('mcp-session-id', record.id).send(JSON.stringify(response))
  }

  /** Counts a new session under its creator (sessions_per_principal); one over the quota is deleted at once. */
  async function admit(record: SessionRecord, request: FastifyRequest): Promise<boolean> {
    let admitted
    try {
      admitted = await limits!.admitSession(callerOf(request), record.id)
    } catch (error) {
      await endpoint.deleteSession(record.id).catch(() => undefined)
      throw error
    }
    if (!admitted) await endpoint.deleteSession(record.id)
    return admitted
  }
}
