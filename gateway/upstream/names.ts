/**
 * How a proxy route names upstream tools and prompts. Every exposed name fits `^[a-zA-Z0-9_-]{1,64}$`
 * (what Claude and OpenAI accept):
 *
 *   "docs" + "__" + "search"              ─► docs__search                 prefixed (auto with 2+ upstreams, always)
 *   "docs" + "__" + "web.search/v2"       ─► docs__web_search_v2_k3j9x0qa  characters outside the set become "_",
 *   "docs" + "__" + <70 characters>       ─► docs__<first 47>_1m2x8d0c     and a deterministic hash of the original
 *                                                                          (upstream, name) keeps such names apart
 *   then tools.allow / tools.deny on that name, then tools.rename.
 *
 * A plain name maps back without any list (`parse`); a hashed or renamed one through the index the
 * route fills whenever it lists an upstream.
 */
import { createHash } from 'node:crypto'
import type { ProxyNaming } from '../config/types.ts'

const VALID = /^[a-zA-Z0-9_-]{1,64}$/
const MAX = 64
const HASH_LENGTH = 8
const HASHED = /_[0-9a-f]{8}$/

/** Where an exposed name leads: the upstream and the name it has there. */
export interface Origin {
  readonly upstream: string
  readonly name: string
  /** A tool's `x-mcp-header` arguments (header suffix → argument), which a stateless upstream checks. */
  readonly paramHeaders?: ReadonlyMap<string, string>
  /** A tool its upstream runs only as a task (`execution.taskSupport: "required"`): the gateway calls it as one and waits. */
  readonly taskRequired?: true
  /** A tool its upstream lists with `annotations.destructiveHint: true` (the approval gate asks about it). */
  readonly destructive?: true
  /** Milliseconds its results are cached: its upstream's `tools.<name>.cache`, and it listed itself read-only. */
  readonly cacheTtlMs?: number
}

export class Naming {
  readonly #upstreams: readonly string[]
  readonly #prefixed: boolean
  readonly #separator: string
  readonly #allow: RegExp[] | undefined
  readonly #deny: RegExp[]
  readonly #rename: ReadonlyMap<string, string>
  readonly #renamedFrom: ReadonlyMap<string, string>

  constructor(naming: ProxyNaming, upstreams: readonly string[]) {
    this.#upstreams = upstreams
    this.#prefixed = naming.prefix === 'always' || (naming.prefix === 'auto' && upstreams.length > 1)
    this.#separator = naming.separator
    this.#allow = naming.tools.allow?.map(glob)
    this.#deny = naming.tools.deny.map(glob)
    this.#rename = new Map(Object.entries(naming.tools.rename))
    this.#renamedFrom = new Map(Object.entries(naming.tools.rename).map(([from, to]) => [to, from]))
  }

  get prefixed(): boolean {
    return this.#prefixed
  }

  /** The exposed name of a prompt (prefix and shortening; no filter or rename). */
  prompt(upstream: string, name: string): string {
    return this.#base(upstream, name)
  }

  /** The exposed name of a tool, or undefined when tools.allow / tools.deny hide it. */
  tool(upstream: string, name: string): string | undefined {
    const base = this.#base(upstream, name)
    if (this.#deny.some((pattern) => pattern.test(base))) return undefined
    if (this.#allow !== undefined && !this.#allow.some((pattern) => pattern.test(base))) return undefined
    return this.#rename.get(base) ?? base
  }

  /**
   * Where a tool name leads when no list taught it: undefined for a hashed name (the index knows it)
   * or a name no upstream could have made. `kind` prompt skips filters and renames.
   */
  parse(exposed: string, kind: 'tool' | 'prompt'): Origin | undefined {
    // What looks hashed may be a shortened name: only the index can tell, so a list decides.
    if (HASHED.test(exposed)) return undefined
    const base = kind === 'tool' ? (this.#renamedFrom.get(exposed) ?? exposed) : exposed
    // A name that a rename moved away is not reachable under its old name.
    if (kind === 'tool' && base === exposed && this.#rename.has(exposed)) return undefined
    for (const upstream of this.#upstreams) {
      const head = this.#prefixed ? `${upstream}${this.#separator}` : ''
      if (!base.startsWith(head)) continue
      const name = base.slice(head.length)
      const made = kind === 'tool' ? this.tool(upstream, name) : this.prompt(upstream, name)
      if (made === exposed) return { upstream, name }
    }
    return undefined
  }

  #base(upstream: string, name: string): string {
    const joined = this.#prefixed ? `${upstream}${this.#separator}${name}` : name
    if (VALID.test(joined)) return joined
    const safe = joined.replace(/[^a-zA-Z0-9_-]/g, '_')
    const hash = createHash('sha256').update(`${upstream}\0${name}`).digest('hex').slice(0, HASH_LENGTH)
    return `${safe.slice(0, MAX - HASH_LENGTH - 1)}_${hash}`
  }
}

/** A glob (`*` any run of characters) as an anchored regular expression. */
function glob(pattern: string): RegExp {
  const body = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')
  return new RegExp(`^${body}$`)
}
