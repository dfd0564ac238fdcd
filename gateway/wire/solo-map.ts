/**
 * A map for entries that mostly come and go one at a time (requests in flight by id, sessions with a
 * call running): the only entry lives in two fields, and a Map is made only while there are more.
 * A Map that empties shrinks, and grows again on its next set, each time through V8's runtime
 * (`Runtime_MapShrink`, ~400 instructions in callgrind): a client with one request in flight, or a
 * session with one call running, emptied four of them on every proxied call.
 *
 * Keys compare with `===` (ids and session ids: strings and integers). Iteration yields the lone
 * entry first, then the rest in insertion order; deleting while iterating is allowed, as on a Map.
 */
export class SoloMap<K, V> {
  #key: K | undefined = undefined
  #value: V | undefined = undefined
  #held = false
  /** The entries besides the lone one; kept once made (it empties only when calls overlapped). */
  #more: Map<K, V> | undefined = undefined

  get size(): number {
    return (this.#held ? 1 : 0) + (this.#more === undefined ? 0 : this.#more.size)
  }

  get(key: K): V | undefined {
    if (this.#held && this.#key === key) return this.#value
    return this.#more === undefined ? undefined : this.#more.get(key)
  }

  has(key: K): boolean {
    return (this.#held && this.#key === key) || (this.#more !== undefined && this.#more.has(key))
  }

  set(key: K, value: V): this {
    if (this.#held ? this.#key === key : this.#more === undefined || this.#more.size === 0 || !this.#more.has(key)) {
      this.#key = key
      this.#value = value
      this.#held = true
    } else {
      ;(this.#more ??= new Map()).set(key, value)
    }
    return this
  }

  delete(key: K): boolean {
    if (this.#held && this.#key === key) {
      this.#held = false
      this.#key = undefined
      this.#value = undefined
      return true
    }
    return this.#more !== undefined && this.#more.delete(key)
  }

  clear(): void {
    this.#held = false
    this.#key = undefined
    this.#value = undefined
    this.#more?.clear()
  }

  *entries(): IterableIterator<[K, V]> {
    if (this.#held) yield [this.#key as K, this.#value as V]
    if (this.#more !== undefined) yield* this.#more.entries()
  }

  *keys(): IterableIterator<K> {
    for (const [key] of this.entries()) yield key
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries()
  }
}
