/**
 * A linked in-memory pair, as the official SDK's InMemoryTransport: a client `Transport` wired
 * straight to a `MessageSession` on a route's endpoint, with no socket and no framing. Messages
 * still travel serialised and a turn of the event loop apart, as on a wire, so what a test sees here
 * is what a WebSocket client would. For tests of protocol/ where a socket adds nothing, and for
 * embedding a route in a process.
 *
 *   McpClient ─► InMemoryClientTransport.send ─► MessageSession.receive ─► McpEndpoint
 *       ▲                                                                      │
 *       └──────── onmessage ◄── MessageChannel.send ◄──────────────────────────┘
 */
import type { Logger } from 'pino'
import type { Transport } from '../client/transport.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { openCaller, type Caller } from '../wire/caller.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import { MessageSession } from './message-session.ts'

/** The client's half: what McpClient talks to. */
class InMemoryClientTransport implements Transport {
  onmessage?: (message: JsonRpcMessage) => void
  onclose?: () => void
  onerror?: (error: Error) => void
  readonly #session: MessageSession
  #closed = false

  constructor(endpoint: McpEndpoint, logger: Logger, caller: Caller) {
    this.#session = new MessageSession(endpoint, {
      send: (text) => {
        if (this.#closed) return false
        // A turn apart, as on a wire: the server's send never runs the client's code inside it.
        setImmediate(() => {
          if (!this.#closed) this.onmessage?.(JSON.parse(text) as JsonRpcMessage)
        })
        return true
      },
      close: () => void this.close(),
    }, logger, caller)
  }

  async start(): Promise<void> {}

  async send(message: JsonRpcMessage): Promise<void> {
    if (this.#closed) throw new Error('the in-memory transport is closed')
    this.#session.receive(JSON.stringify(message))
  }

  /** Ends the session (as a closed WebSocket does) and tells the client, once. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#session.end()
    this.onclose?.()
  }
}

/** A client transport linked to a new session on `endpoint`, as `caller` (default: an open route's); closing it ends the session. */
export function connectInMemory(endpoint: McpEndpoint, logger: Logger = endpoint.logger, caller: Caller = openCaller('in-memory')): Transport {
  return new InMemoryClientTransport(endpoint, logger, caller)
}
