/**
 * The text of an outgoing JSON-RPC message. A result many answers share (a proxy route's ready list,
 * upstream/list-answers.ts) is serialised once, when it is made; each answer then splices its own id
 * in front of that text instead of walking the result again:
 *
 *   {"jsonrpc":"2.0","id":<the request's id>,"result":<the kept text>}
 *
 * which is exactly what JSON.stringify makes of the message. A proxied result passed on unread (a
 * VerbatimResult) is spliced in the same way: the upstream's text, the client's id. Every other
 * message is JSON.stringify'd.
 */
import type { JsonRpcMessage } from './jsonrpc.ts'

const TEXTS = new WeakMap<object, string>()

/**
 * Makes `result` shareable: it and its lists frozen (a phase that tried to change them in place would
 * throw rather than change every caller's answer; the items are the cached pages', frozen where they
 * are kept, or the registry's, shared already) and its JSON text kept beside it. Returns that text.
 */
export function shareResult(result: object): string {
  Object.freeze(result)
  for (const value of Object.values(result)) if (Array.isArray(value)) Object.freeze(value)
  const text = JSON.stringify(result)
  TEXTS.set(result, text)
  return text
}

/**
 * A result passed on as the text it came in, unparsed: a proxy's upstream result that it does not
 * read (client/result-text.ts checked that `text` is exactly one JSON object). An answer made of it
 * splices the text in; anything that serialises it otherwise gets the value it holds (toJSON). It has
 * no members to read, and it is frozen: only a caller that passes the result on unread takes one.
 */
export class VerbatimResult {
  readonly #text: string

  constructor(text: string) {
    this.#text = text
    Object.freeze(this)
  }

  get text(): string {
    return this.#text
  }

  toJSON(): unknown {
    return JSON.parse(this.#text)
  }
}

/** JSON.stringify(message), with a shared result's kept text spliced in rather than serialised again. */
export function messageText(message: JsonRpcMessage): string {
  const result = (message as { result?: unknown }).result
  if (typeof result === 'object' && result !== null) {
    const text = result instanceof VerbatimResult ? result.text : TEXTS.get(result)
    // Only the three members resultMessage makes; anything else is serialised in full.
    if (text !== undefined && keyCount(message) === 3 && message.jsonrpc === '2.0' && 'id' in message) {
      return `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${text}}`
    }
  }
  return JSON.stringify(message)
}

function keyCount(value: object): number {
  let count = 0
  for (const key in value) if (Object.hasOwn(value, key)) count++
  return count
}
