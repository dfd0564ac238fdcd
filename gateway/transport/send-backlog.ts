/**
 * The unsent backlog of one connection to a client (an SSE response, a WebSocket): what the client
 * has not read yet is held in this process's memory, so it is bounded, in bytes and in messages
 * (each buffered write also costs an object of its own). The route's `send_buffer` sets the bound.
 *
 * The bytes are the connection's own count (`writableLength`, `bufferedAmount`): no copy, one
 * comparison per message. The message count restarts whenever the connection is seen with nothing
 * unsent. A message is judged by what is unsent before it, so one message larger than the bound still
 * goes to a client that reads: a connection holds at most the bound plus one message.
 */
import type { ServerResponse } from 'node:http'

/** The bound, from the route's `send_buffer`. */
export interface SendBufferLimits {
  maxBytes: number
  maxMessages: number
}

export class SendBacklog {
  readonly limits: SendBufferLimits
  #messages = 0

  constructor(limits: SendBufferLimits) {
    this.limits = limits
  }

  /**
   * Counts one more message on a connection holding `unsent` bytes; false (nothing counted) when the
   * connection is already over its bound: the client is not reading, and the caller cuts it.
   */
  admit(unsent: number): boolean {
    if (unsent === 0) this.#messages = 0
    else if (unsent > this.limits.maxBytes || this.#messages >= this.limits.maxMessages) return false
    this.#messages++
    return true
  }
}

/**
 * Resolves true once `connection` has flushed what it holds, false if it closed first. A replay waits
 * on it between events: a client reading a long replay is given its pace, not cut. Nothing held is
 * drained whatever `writableNeedDrain` says: on Node 22 a response whose corked writes passed the
 * high-water mark keeps the flag after `uncork()` flushed them, and no 'drain' ever comes.
 */
export function drained(connection: ServerResponse): Promise<boolean> {
  if (!connection.writableNeedDrain || connection.writableLength === 0) return Promise.resolve(!connection.destroyed)
  return new Promise((resolve) => {
    const onDrain = (): void => {
      connection.off('close', onClose)
      resolve(true)
    }
    const onClose = (): void => {
      connection.off('drain', onDrain)
      resolve(false)
    }
    connection.once('drain', onDrain)
    connection.once('close', onClose)
  })
}
