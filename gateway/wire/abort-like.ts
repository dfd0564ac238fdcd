/**
 * Cancellation between the gateway's own layers without the cost of an AbortController. Making one
 * (an EventTarget underneath) and adding and removing its listeners cost several µs a request, and
 * a proxied call paid them at every layer it crosses: the downstream request's ctx, the client's
 * request, the transport's exchange, the HTTP connection. `AbortLike` is the part of an AbortSignal
 * those layers use, so a real AbortSignal (a handler's, a caller's) still fits wherever one goes.
 *
 *   LightAbort.abort(reason) ─► aborted, reason ─► each listener once ─► .signal (a real one, made only when read)
 */

/** What cancels an operation: an AbortSignal, or the cheaper LightAbort. */
export interface AbortLike {
  readonly aborted: boolean
  readonly reason: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

/**
 * An AbortController and its signal in one plain object: listeners are called once, in the order
 * added, when `abort` is first called. `signal` gives a real AbortSignal that follows it, for APIs
 * that need one (fetch, timers/promises), and is made only when read.
 */
export class LightAbort implements AbortLike {
  aborted = false
  reason: unknown = undefined
  /** One listener (the usual case), or several. */
  #listeners: (() => void) | Array<() => void> | undefined
  #controller: AbortController | undefined

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return
    const listeners = this.#listeners
    if (listeners === undefined) this.#listeners = listener
    else if (typeof listeners === 'function') this.#listeners = [listeners, listener]
    else listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners
    if (listeners === listener) this.#listeners = undefined
    else if (Array.isArray(listeners)) {
      const at = listeners.indexOf(listener)
      if (at >= 0) listeners.splice(at, 1)
    }
  }

  /** Aborts with `reason` (an AbortError DOMException when none is given, as AbortController does); later calls do nothing. */
  abort(reason?: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason
    const listeners = this.#listeners
    this.#listeners = undefined
    this.#controller?.abort(this.reason)
    if (typeof listeners === 'function') listeners()
    else if (listeners !== undefined) for (const listener of listeners) listener()
  }

  /** A real AbortSignal that aborts with this one (already aborted when this one is). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.aborted) this.#controller.abort(this.reason)
    }
    return this.#controller.signal
  }
}

/** A real AbortSignal for `abort`: itself when it is one. */
export function realSignal(abort: AbortLike): AbortSignal {
  return abort instanceof LightAbort ? abort.signal : (abort as AbortSignal)
}
