/**
 * A worker's ready answers of a proxy route's aggregated lists. Once every upstream's page of a list
 * came from the list cache (list-cache.ts), the merged and filtered result is kept here, frozen, with
 * its JSON text (wire/message-text.ts): the next such list is one read of the upstreams' generations
 * and the request's id spliced in front of that text; nothing is merged, filtered or serialised again.
 *
 *   aggregate ─► find(key, principal) ─► none ─► pages (list-cache.ts) ─► merge, expose, filter ─► every page a hit? keep it here
 *                   │ found, not expired, every upstream not down, the local page the same object
 *                   ▼
 *               store: the upstreams' generations (one read) ─► as when kept ─► the answer
 *                                                             └► moved on (list_changed, reload, on any host) ─► dropped, the long way
 *
 * Key: (list, cursor, the caller's scopes where the route's `scopes` filter lists). An answer made of
 * public pages only is shared by every caller with that key; one holding a private page is kept for
 * its principal alone and looked up under it: never found for another.
 *
 * Bounds (docs/catalogues.md): per route and worker at most ANSWERS_PER_ROUTE answers and
 * `limits.cache_bytes_per_route` bytes of their text, per principal `limits.cache_entries_per_principal`
 * private answers, and every route's answers in this process `limits.cache_bytes_total` bytes; over a
 * bound the oldest answer (the route's, or that principal's) goes first.
 */
import type { CacheScope } from '../wire/cache-hints.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { shareResult } from '../wire/message-text.ts'

/** Answers one route keeps per worker, whatever their size. */
export const ANSWERS_PER_ROUTE = 256

/** One ready answer: the result every caller with its key gets, and what it was made from. */
export interface ReadyAnswer {
  /** Frozen, its text kept beside it (shareResult). */
  readonly result: JsonObject
  /** The upstreams it holds a page of, their list-cache groups, and each group's generation when read. */
  readonly groups: readonly string[]
  readonly generations: readonly number[]
  readonly names: readonly string[]
  /** The route's own page it was merged with (the registry's shared page object), or undefined. */
  readonly local: object | undefined
  /** The earliest expiry of its pages (ms since the epoch). */
  readonly expiresAt: number
  /** private when any page was. */
  readonly scope: CacheScope
  /** The principal a private answer belongs to. */
  readonly principal: string | undefined
  readonly bytes: number
  /** Where it is kept: its key, and for a private answer its principal. */
  readonly slot: string
}

/** What keep() needs; the text and its bytes are made there. */
export type AnswerParts = Omit<ReadyAnswer, 'bytes' | 'slot'>

/** Bytes held by every route's answers in this process (their bound is `limits.cache_bytes_total`). */
let heldInProcess = 0

export class ListAnswers {
  readonly #byKey = new Map<string, ReadyAnswer>()
  readonly #perPrincipal = new Map<string, number>()
  readonly #routeBytes: number
  readonly #totalBytes: number
  readonly #principalEntries: number
  #bytes = 0

  constructor(bounds: { routeBytes: number; totalBytes: number; principalEntries: number }) {
    this.#routeBytes = bounds.routeBytes
    this.#totalBytes = bounds.totalBytes
    this.#principalEntries = bounds.principalEntries
  }

  /** The answer kept for `key` that `principal` may read (a shared one first, as the pages are read); expired ones go. */
  find(key: string, principal: string | undefined, now: number): ReadyAnswer | undefined {
    let answer = this.#byKey.get(key)
    if (answer === undefined && principal !== undefined) answer = this.#byKey.get(privateKey(key, principal))
    if (answer === undefined) return undefined
    if (answer.expiresAt > now) return answer
    this.drop(answer)
    return undefined
  }

  /** Keeps an answer (its text made now); false when it alone is over a byte bound. */
  keep(key: string, parts: AnswerParts): boolean {
    const text = shareResult(parts.result)
    const bytes = Buffer.byteLength(text)
    if (bytes > this.#routeBytes || bytes > this.#totalBytes) return false
    const slot = parts.principal === undefined ? key : privateKey(key, parts.principal)
    const known = this.#byKey.get(slot)
    if (known !== undefined) this.drop(known)
    if (parts.principal !== undefined && (this.#perPrincipal.get(parts.principal) ?? 0) >= this.#principalEntries) this.#dropOldest(parts.principal)
    while (this.#byKey.size >= ANSWERS_PER_ROUTE || this.#bytes + bytes > this.#routeBytes || heldInProcess + bytes > this.#totalBytes) {
      // What other routes hold is theirs to drop: with nothing of this route's left, this one is not kept.
      if (!this.#dropOldest(undefined)) return false
    }
    const answer: ReadyAnswer = { ...parts, bytes, slot }
    this.#byKey.set(slot, answer)
    this.#bytes += bytes
    heldInProcess += bytes
    if (parts.principal !== undefined) this.#perPrincipal.set(parts.principal, (this.#perPrincipal.get(parts.principal) ?? 0) + 1)
    return true
  }

  /** Drops `answer` (no longer what the store holds); nothing when it went already. */
  drop(answer: ReadyAnswer): void {
    if (this.#byKey.get(answer.slot) !== answer) return
    this.#byKey.delete(answer.slot)
    this.#release(answer)
  }

  /** Every answer gone (an upstream's lists changed, a reload, the route closed). */
  clear(): void {
    for (const answer of this.#byKey.values()) heldInProcess -= answer.bytes
    this.#byKey.clear()
    this.#perPrincipal.clear()
    this.#bytes = 0
  }

  /** Answers and bytes held (tests, the admin view). */
  usage(): { answers: number; bytes: number; inProcess: number } {
    return { answers: this.#byKey.size, bytes: this.#bytes, inProcess: heldInProcess }
  }

  /** Drops the oldest answer (of `principal`, when given); false when there was none. */
  #dropOldest(principal: string | undefined): boolean {
    for (const [key, answer] of this.#byKey) {
      if (principal !== undefined && answer.principal !== principal) continue
      this.#byKey.delete(key)
      this.#release(answer)
      return true
    }
    return false
  }

  #release(answer: ReadyAnswer): void {
    this.#bytes -= answer.bytes
    heldInProcess -= answer.bytes
    if (answer.principal === undefined) return
    const left = (this.#perPrincipal.get(answer.principal) ?? 1) - 1
    if (left === 0) this.#perPrincipal.delete(answer.principal)
    else this.#perPrincipal.set(answer.principal, left)
  }
}

function privateKey(key: string, principal: string): string {
  return `${key}\0${principal}`
}

const scopeKeys = new WeakMap<ReadonlySet<string>, string>()

/**
 * The key of a list's answer: the list and the cursor it was asked at and, where the route's `scopes`
 * filter lists (`byScopes`), the caller's scopes (the same set of scopes sees the same list).
 */
export function answerKey(kind: string, cursor: string | undefined, scopes: ReadonlySet<string> | undefined, byScopes: boolean): string {
  const base = `${kind}\0${cursor ?? ''}`
  if (!byScopes) return base
  if (scopes === undefined) return `${base}\0-`
  let held = scopeKeys.get(scopes)
  if (held === undefined) scopeKeys.set(scopes, (held = JSON.stringify([...scopes].sort())))
  return `${base}\0+${held}`
}
