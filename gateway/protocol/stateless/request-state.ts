/**
 * The `requestState` of an input-required result (MCP 2026-07-28, multi round-trip requests): what
 * the gateway needs to resume a handler on the client's retry — the answers gathered in earlier
 * rounds and the handler's own continuation data. It travels through the client, so it is signed
 * (HMAC-SHA256) and bound to the method, a digest of the request's parameters, the principal and an
 * expiry; anything else is rejected. Signed, not encrypted: handlers must not put secrets in it.
 *
 *   state = base64url(JSON payload) "." base64url(HMAC(key, payload))
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { EdgeError, McpError, RpcCode } from '../../wire/errors.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import { canonicalJson } from '../../wire/canonical-json.ts'

export interface RequestStatePayload {
  /** Answers to input requests from earlier rounds, by key. */
  answers: JsonObject
  /** The handler's own continuation data (`ctx.setRequestState`). */
  handlerState: unknown
  /** The approval gate's own (gateway/phases/approval-gate.ts): the approval asked or granted; absent on routes without one. */
  approval?: JsonObject
}

interface SignedPayload {
  m: string
  d: string
  p: string | null
  e: number
  a: JsonObject
  s?: unknown
  g?: JsonObject
}

/** A stable digest of the parameters that define a request (not its envelope, answers or state). */
export function paramsDigest(params: JsonObject): string {
  const hash = createHash('sha256')
  const { _meta, inputResponses, requestState, ...defining } = params
  void _meta
  void inputResponses
  void requestState
  hash.update(canonicalJson(defining))
  return hash.digest('base64url').slice(0, 22)
}

export class RequestStateCodec {
  readonly #key: Buffer
  readonly #ttlMs: number

  /** `key` from config or the environment; a random key (valid in this process only) when absent. */
  constructor(key: string | undefined, ttlSeconds: number) {
    this.#key = key === undefined || key === '' ? randomBytes(32) : Buffer.from(key, 'utf8')
    this.#ttlMs = ttlSeconds * 1000
  }

  sign(method: string, digest: string, principal: string | undefined, payload: RequestStatePayload): string {
    const signed: SignedPayload = { m: method, d: digest, p: principal ?? null, e: Date.now() + this.#ttlMs, a: payload.answers }
    if (payload.handlerState !== undefined) signed.s = payload.handlerState
    if (payload.approval !== undefined) signed.g = payload.approval
    const body = Buffer.from(JSON.stringify(signed)).toString('base64url')
    return `${body}.${this.#mac(body)}`
  }

  /** The payload of a state this gateway signed for this very request; throws -32602 otherwise. */
  verify(state: unknown, method: string, digest: string, principal: string | undefined): RequestStatePayload {
    if (typeof state !== 'string') throw invalid('requestState must be the string the server returned')
    const dot = state.indexOf('.')
    const body = state.slice(0, dot)
    const mac = Buffer.from(state.slice(dot + 1), 'base64url')
    const expected = Buffer.from(this.#mac(body), 'base64url')
    if (dot <= 0 || mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
      throw invalid('requestState failed its integrity check (tampered, or signed by another key)')
    }
    const signed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as SignedPayload
    if (signed.e < Date.now()) throw invalid('requestState expired; send the request again without it')
    if (signed.m !== method || signed.d !== digest || signed.p !== (principal ?? null)) {
      throw invalid('requestState belongs to another request (method, parameters or principal differ)')
    }
    return signed.g === undefined ? { answers: signed.a, handlerState: signed.s } : { answers: signed.a, handlerState: signed.s, approval: signed.g }
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url')
  }
}

function invalid(message: string): McpError {
  return new McpError(RpcCode.InvalidParams, `Invalid requestState: ${message}`)
}

/**
 * The codec a gateway's config asks for: its key, else MCP_EDGE_REQUEST_STATE_KEY, else a random one.
 * A key under 16 characters is refused (config loading refuses it first, with its file).
 */
export function codecFromConfig(config: { key?: string; ttl: number }, env: NodeJS.ProcessEnv = process.env): RequestStateCodec {
  const key = config.key ?? env.MCP_EDGE_REQUEST_STATE_KEY
  if (key !== undefined && key !== '' && key.length < 16) {
    throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `the requestState key has ${key.length} characters; it needs at least 16`)
  }
  return new RequestStateCodec(key, config.ttl)
}
