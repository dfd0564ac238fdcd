/**
 * Paged listing of one registry list with opaque cursors. A cursor is the base64url of the offset of
 * the next page ("o40"), so it survives any worker and needs no server-side state.
 *
 * Pages of the full list are built once and kept until the list changes, so a `tools/list` on an
 * unchanged registry allocates nothing. A session that hides some of the list's components gets
 * pages built for it on each call (hidden sets are per session and rare).
 */
import { McpError, RpcCode } from '../wire/errors.ts'

/** One page of a list: `{tools: [...], nextCursor?}` and so on. Shared and frozen: copy before adding keys. */
export type Page<F extends string, D> = { readonly [K in F]: readonly D[] } & { readonly nextCursor?: string }

interface Listed<D> {
  readonly key: string
  readonly descriptor: D
}

const CURSOR = /^[A-Za-z0-9_-]{1,16}$/
const OFFSET = /^o([1-9][0-9]{0,9})$/

/** Builds and caches the pages of one list. */
export class Pager<F extends string, D> {
  readonly #field: F
  readonly #pageSize: number
  readonly #entries: ReadonlyMap<string, Listed<D>>
  readonly #prefix: string
  #pages: Array<Page<F, D>> | undefined

  /**
   * `entries` is the live map the registry keeps (keyed by name or URI); `prefix` is the hidden-key
   * prefix of this list (`tool:`); `pageSize` 0 means one page with everything.
   */
  constructor(field: F, pageSize: number, entries: ReadonlyMap<string, Listed<D>>, prefix: string) {
    this.#field = field
    this.#pageSize = pageSize > 0 ? Math.floor(pageSize) : Infinity
    this.#entries = entries
    this.#prefix = prefix
  }

  /** Forgets the cached pages; the registry calls it whenever the list changes. */
  invalidate(): void {
    this.#pages = undefined
  }

  /** The page at `cursor` (the first page without one); throws InvalidParams on a cursor it did not make. */
  page(cursor: string | undefined, hidden?: ReadonlySet<string>): Page<F, D> {
    if (hidden !== undefined && this.#hidesAny(hidden)) {
      const visible: D[] = []
      for (const entry of this.#entries.values()) if (!hidden.has(entry.key)) visible.push(entry.descriptor)
      const offset = cursor === undefined ? 0 : decodeCursor(cursor, visible.length)
      return this.#build(visible, offset)
    }
    const pages = (this.#pages ??= this.#buildAll())
    if (cursor === undefined) return pages[0] as Page<F, D>
    const offset = decodeCursor(cursor, this.#entries.size)
    // Cursors this module made land on page boundaries; any other in-range offset still gets its page.
    const cached = offset % this.#pageSize === 0 ? pages[offset / this.#pageSize] : undefined
    return cached ?? this.#build(this.#descriptors(), offset)
  }

  #hidesAny(hidden: ReadonlySet<string>): boolean {
    if (hidden.size === 0) return false
    for (const key of hidden) {
      if (key.startsWith(this.#prefix) && this.#entries.has(key.slice(this.#prefix.length))) return true
    }
    return false
  }

  #buildAll(): Array<Page<F, D>> {
    const all = this.#descriptors()
    const pages: Array<Page<F, D>> = [this.#build(all, 0)]
    for (let offset = this.#pageSize; offset < all.length; offset += this.#pageSize) pages.push(this.#build(all, offset))
    return pages
  }

  #descriptors(): D[] {
    const all: D[] = []
    for (const entry of this.#entries.values()) all.push(entry.descriptor)
    return all
  }

  #build(all: readonly D[], offset: number): Page<F, D> {
    const end = offset + this.#pageSize
    const items = Object.freeze(all.slice(offset, end))
    const page: Record<string, unknown> = { [this.#field]: items }
    if (end < all.length) page.nextCursor = encodeCursor(end)
    return Object.freeze(page) as Page<F, D>
  }
}

/** The cursor that points at `offset`. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o${offset}`).toString('base64url')
}

/** The offset a cursor points at; throws InvalidParams when it is malformed or past the end of a list of `length`. */
export function decodeCursor(cursor: unknown, length: number): number {
  if (typeof cursor === 'string' && CURSOR.test(cursor)) {
    const match = OFFSET.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
    if (match !== null) {
      const offset = Number(match[1])
      // Only cursors this module could have made: canonical encoding, and inside the list.
      if (offset < length && encodeCursor(offset) === cursor) return offset
    }
  }
  throw new McpError(RpcCode.InvalidParams, 'Invalid cursor', { cursor })
}
