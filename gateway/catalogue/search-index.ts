/**
 * The full-text index tool search looks tools up in: one MiniSearch index per distinct tool list,
 * built from the list a caller sees (so scopes, a session's hidden tools and per-user upstream lists
 * shape it) and kept by the digest of that list. A changed list has another digest, so the index is
 * rebuilt on list changes without being told; two callers who see the same list share one index, and
 * a caller never searches a list they could not have listed.
 *
 *   caller's tools/list (all pages) ─► digest ─► LRU hit? ─► SearchIndex
 *                                                 └ miss ─► tokenise name/title/description ─► MiniSearch
 */
import { createHash } from 'node:crypto'
import MiniSearch from 'minisearch'
import { compileObjectSchema, type ValidateFunction } from '../registry/json-schema.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

/** One hit: the tool and how well it matched. */
export interface SearchHit {
  readonly tool: JsonObject
  readonly score: number
}

/** Words too common to tell tools apart ("how do I get the ..."). */
const STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'the', 'and', 'or', 'of', 'to', 'in', 'on', 'for', 'with', 'by', 'from', 'at', 'as', 'is', 'are', 'be', 'it', 'its',
  'this', 'that', 'these', 'those', 'i', 'me', 'my', 'we', 'our', 'you', 'your', 'can', 'could', 'would', 'should', 'will', 'do',
  'does', 'how', 'what', 'which', 'want', 'need', 'please', 'some', 'any', 'all', 'into', 'about', 'tool', 'tools', 'using', 'use',
])

/** Splits names as well as prose: `read_text_file`, `createEntities`, `get-env` each give their words. */
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '')
}

/** Lower case, common words dropped, plural and verb endings cut, so "files" finds "file" and "listing" finds "list". */
function stem(term: string): string | null {
  const word = term.toLowerCase()
  if (STOP_WORDS.has(word)) return null
  if (word.length > 5 && word.endsWith('ies')) return word.slice(0, -3) + 'y'
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3)
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2)
  if (word.length > 4 && (word.endsWith('ches') || word.endsWith('shes') || word.endsWith('sses') || word.endsWith('xes'))) return word.slice(0, -2)
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1)
  return word
}

interface Document {
  id: number
  name: string
  title: string
  description: string
}

/** The index of one tool list, with the tools by name and their argument validators (compiled when first needed). */
export class SearchIndex {
  readonly tools: ReadonlyMap<string, JsonObject>
  readonly #search: MiniSearch<Document>
  readonly #order: readonly JsonObject[]
  readonly #validators = new Map<string, ValidateFunction | Error>()

  constructor(tools: readonly JsonObject[]) {
    this.#order = tools
    this.tools = new Map(tools.map((tool) => [String(tool.name), tool]))
    this.#search = new MiniSearch<Document>({
      fields: ['name', 'title', 'description'],
      tokenize,
      processTerm: stem,
      // Fuzzy matching (typos, "analyse" for "analyze") only for longer words: on short ones it finds
      // look-alikes ("last" for "list") and costs most of a search's time.
      searchOptions: { boost: { name: 3, title: 2, description: 1 }, prefix: true, fuzzy: (term) => (term.length > 5 ? 0.2 : false), combineWith: 'OR' },
    })
    this.#search.addAll(tools.map((tool, id) => ({
      id,
      name: String(tool.name),
      title: titleOf(tool),
      description: typeof tool.description === 'string' ? tool.description : '',
    })))
  }

  /** How many tools the list holds. */
  get size(): number {
    return this.#order.length
  }

  /** The best `limit` matches of `query`, best first. */
  search(query: string, limit: number): SearchHit[] {
    return this.#search.search(query).slice(0, limit).map((result) => ({ tool: this.#order[result.id as number]!, score: result.score }))
  }

  /** The validator of `name`'s input schema; an Error when the schema does not compile (the call then goes on unchecked, as without search). */
  validator(name: string): ValidateFunction | Error | undefined {
    const tool = this.tools.get(name)
    if (tool === undefined) return undefined
    let validator = this.#validators.get(name)
    if (validator === undefined) {
      try {
        validator = compileObjectSchema(tool.inputSchema ?? { type: 'object' })
      } catch (error) {
        validator = error as Error
      }
      this.#validators.set(name, validator)
    }
    return validator
  }
}

/** A tool's title: its own, else its annotations' (older servers put it there). */
export function titleOf(tool: JsonObject): string {
  if (typeof tool.title === 'string') return tool.title
  const annotations = tool.annotations as { title?: unknown } | undefined
  return typeof annotations?.title === 'string' ? annotations.title : ''
}

/** The indexes of one route on this worker, by the digest of the list each was built from; the least recently used goes first. */
export class SearchIndexes {
  readonly #max: number
  readonly #indexes = new Map<string, SearchIndex>()

  constructor(max: number) {
    this.#max = max
  }

  /** The index of `tools`, built when no caller's list had this content yet. */
  of(tools: readonly JsonObject[]): SearchIndex {
    const digest = createHash('sha256').update(JSON.stringify(tools)).digest('base64url')
    let index = this.#indexes.get(digest)
    if (index !== undefined) {
      this.#indexes.delete(digest)
      this.#indexes.set(digest, index)
      return index
    }
    index = new SearchIndex(tools)
    if (this.#indexes.size >= this.#max) this.#indexes.delete(this.#indexes.keys().next().value as string)
    this.#indexes.set(digest, index)
    return index
  }

  /** How many indexes are kept (for tests of the bound). */
  get size(): number {
    return this.#indexes.size
  }
}
