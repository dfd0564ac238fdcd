/**
 * Parses a YAML config and remembers where each node sits, so problems found later (by ajv, by
 * interpolation) can be reported as `file:line:col`.
 *
 * js-yaml 5 dropped v4's `listener` option and its documents carry no positions, but it exposes the
 * stage underneath `load()`: `parseEvents()` yields a flat event stream whose nodes carry source
 * offsets, and `constructFromEvents()` builds the same value `load()` would from those events. So we
 * parse once, walk the events with a stack to index JSON pointer -> offset, and construct from the
 * same events: one parse, no second tokenizer to drift from js-yaml's idea of the text.
 *
 *   text ──parseEvents──► events ──constructFromEvents──► document
 *                            └──────indexPositions──────► pointer → offset ──► line:col
 *
 * A mapping member is located at its key (that is where a reader looks), a sequence item at the
 * item. Nodes reached only through an alias or a merge key have no entry of their own; they are
 * located at the `<<` that merged them in, or else at their nearest indexed ancestor.
 *
 * Aliases share the node they name, so a few hundred bytes can stand for billions of values once
 * anything walks the document (a "billion laughs"). The alias count is bounded by js-yaml, and the
 * size of the document as a walk sees it (aliases expanded) by a count that stops at the bound.
 */
import {
  CORE_SCHEMA, EVENT_ID, SCALAR_STYLE, YAMLException, constructFromEvents, getScalarValue, mergeTag, parseEvents,
  type Event,
} from 'js-yaml'
import { ConfigError } from './config-error.ts'
import { toPointer } from './doc-path.ts'

/** A 1-based position in the source text. */
export interface SourcePosition { line: number; column: number }

/** A parsed YAML document and a way to find where any of its nodes was written. */
export interface YamlSource {
  doc: unknown
  /** Position of the node at `pointer`, or of its nearest ancestor that has one. */
  locate(pointer: string): SourcePosition | undefined
}

// Merge keys (`<<: *defaults`) are the usual way to share settings between routes.
const SCHEMA = CORE_SCHEMA.withTags(mergeTag)

/** How much a config file may hold: aliases written, and values once aliases are expanded. */
export interface YamlBounds { maxAliases: number; maxNodes: number }

/** Defaults of `YamlBounds` (MCP_EDGE_CONFIG_MAX_ALIASES, MCP_EDGE_CONFIG_MAX_NODES override them). */
export const DEFAULT_YAML_BOUNDS: YamlBounds = { maxAliases: 1000, maxNodes: 100_000 }

/** Parses `text`; a syntax error throws a `ConfigError` at js-yaml's mark, and so does a document over `bounds`. */
export function parseYaml(text: string, file: string, bounds: YamlBounds = DEFAULT_YAML_BOUNDS): YamlSource {
  let docs: unknown[]
  let events: Event[]
  try {
    events = parseEvents(text, { filename: file })
    docs = constructFromEvents(events, { source: text, filename: file, schema: SCHEMA, maxAliases: bounds.maxAliases })
  } catch (err) {
    const problem = syntaxProblem(err, file, text)
    if (/^aliases exceeded/.test(problem.message)) {
      problem.message = `more than ${bounds.maxAliases} aliases (*name); raise MCP_EDGE_CONFIG_MAX_ALIASES to allow more`
    }
    throw new ConfigError([problem])
  }
  if (exceedsNodes(docs[0], bounds.maxNodes)) {
    throw new ConfigError([{
      file,
      path: '',
      message: `the document holds more than ${bounds.maxNodes} values once its aliases are expanded (an alias bomb?); raise MCP_EDGE_CONFIG_MAX_NODES to allow more`,
    }])
  }
  if (docs.length === 0 || docs[0] === null || docs[0] === undefined) {
    throw new ConfigError([{ file, line: 1, column: 1, path: '', message: 'the file has no settings (it is empty)' }])
  }
  if (docs.length > 1) {
    throw new ConfigError([{ file, path: '', message: `expected one YAML document, found ${docs.length}` }])
  }
  const offsets = indexPositions(events, text)
  const lines = lineStarts(text)
  return {
    doc: docs[0],
    locate(pointer) {
      for (let p = pointer; ; ) {
        const offset = offsets.get(p)
        if (offset !== undefined) return toPosition(offset, lines)
        if (p === '') return undefined
        p = p.slice(0, p.lastIndexOf('/'))
        // A key the parent got from `<<: *defaults` is best shown at that `<<`.
        const merged = offsets.get(`${p}/<<`)
        if (merged !== undefined) return toPosition(merged, lines)
      }
    },
  }
}

/** True when walking `doc` (aliases expanded, as every later stage walks it) meets more than `max` values; stops at the bound. */
function exceedsNodes(doc: unknown, max: number): boolean {
  let budget = max
  const pending: unknown[] = [doc]
  while (pending.length > 0) {
    const node = pending.pop()
    if (--budget < 0) return true
    if (Array.isArray(node)) {
      for (const item of node) pending.push(item)
    } else if (node !== null && typeof node === 'object') {
      for (const key in node) pending.push((node as Record<string, unknown>)[key])
    }
    if (pending.length > budget) return true
  }
  return false
}

function syntaxProblem(err: unknown, file: string, text: string) {
  if (err instanceof YAMLException) {
    const { mark } = err
    return mark
      ? { file, line: mark.line + 1, column: mark.column + 1, path: '', message: err.reason + flowInterpolationHint(text, mark.line) }
      : { file, path: '', message: err.reason }
  }
  return { file, path: '', message: `cannot parse YAML: ${err instanceof Error ? err.message : String(err)}` }
}

/**
 * Inside a flow collection, an unquoted `${NAME}` is YAML (`{` opens a mapping), so the error js-yaml
 * reports ("missed comma between flow collection entries") does not say what is wrong: this does.
 */
function flowInterpolationHint(text: string, line: number): string {
  const source = text.split('\n')[line] ?? ''
  const found = /\$\{[^}\s,]*\}?/.exec(source)
  if (found === null) return ''
  const before = source.slice(0, found.index)
  if (!/[{[]/.test(before) || /["']$/.test(before)) return ''
  return `; ${found[0]} inside a flow collection ({ … } or [ … ]) must be quoted: "${found[0]}"`
}

type Frame =
  | { kind: 'document' }
  // `key` is undefined while the next node is a key, null when that key cannot be addressed.
  | { kind: 'mapping'; pointer: string | null; key: string | null | undefined; keyOffset: number }
  | { kind: 'sequence'; pointer: string | null; index: number }
  // Inside a collection used as a mapping key; `depth` counts the collections still open. js-yaml's
  // default mapping refuses such keys, but the walk must not depend on that to stay in step.
  | { kind: 'complex-key'; depth: number }

/** Maps the JSON pointer of every node in the first document to the offset where it is written. */
function indexPositions(events: readonly Event[], text: string): Map<string, number> {
  const offsets = new Map<string, number>()
  const stack: Frame[] = []
  let documents = 0
  for (const ev of events) {
    const top = stack[stack.length - 1]
    if (ev.type === EVENT_ID.DOCUMENT) {
      documents++
      stack.push({ kind: 'document' })
      continue
    }
    if (ev.type === EVENT_ID.POP) {
      if (top?.kind === 'complex-key' && --top.depth > 0) continue
      stack.pop()
      continue
    }
    if (documents > 1 || top === undefined) continue
    const opens = ev.type === EVENT_ID.MAPPING || ev.type === EVENT_ID.SEQUENCE
    if (top.kind === 'complex-key') {
      if (opens) top.depth++
      continue
    }
    if (top.kind === 'mapping' && top.key === undefined) {
      top.keyOffset = nodeOffset(ev)
      top.key = ev.type === EVENT_ID.SCALAR ? getScalarValue(text, ev) : null
      if (opens) stack.push({ kind: 'complex-key', depth: 1 })
      continue
    }
    let pointer: string | null
    let offset: number
    if (top.kind === 'mapping') {
      pointer = top.pointer === null || typeof top.key !== 'string' ? null : top.pointer + toPointer([top.key])
      offset = top.keyOffset
      top.key = undefined
    } else if (top.kind === 'sequence') {
      pointer = top.pointer === null ? null : `${top.pointer}/${top.index}`
      offset = nodeOffset(ev)
      top.index++
    } else {
      pointer = ''
      offset = nodeOffset(ev)
    }
    // The first occurrence wins: a later duplicate key is a YAML error reported by js-yaml anyway.
    if (pointer !== null && !offsets.has(pointer)) offsets.set(pointer, offset)
    if (ev.type === EVENT_ID.MAPPING) stack.push({ kind: 'mapping', pointer, key: undefined, keyOffset: 0 })
    if (ev.type === EVENT_ID.SEQUENCE) stack.push({ kind: 'sequence', pointer, index: 0 })
  }
  return offsets
}

/** Where a node's text starts: its anchor or tag if it has one, the opening quote of a quoted scalar. */
function nodeOffset(ev: Event): number {
  switch (ev.type) {
    case EVENT_ID.SCALAR: {
      const quoted = ev.style === SCALAR_STYLE.SINGLE_QUOTED || ev.style === SCALAR_STYLE.DOUBLE_QUOTED
      return earliest(quoted ? ev.valueStart - 1 : ev.valueStart, ev.anchorStart - 1, ev.tagStart)
    }
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      return earliest(ev.start, ev.anchorStart - 1, ev.tagStart)
    case EVENT_ID.ALIAS:
      return ev.anchorStart - 1
    default:
      return 0
  }
}

// Offsets of absent parts are -1 (so -2 for `anchorStart - 1`).
function earliest(...offsets: number[]): number {
  return Math.min(...offsets.filter((o) => o >= 0))
}

function lineStarts(text: string): number[] {
  const starts = [0]
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1)
  return starts
}

function toPosition(offset: number, starts: readonly number[]): SourcePosition {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((starts[mid] ?? 0) <= offset) lo = mid
    else hi = mid - 1
  }
  return { line: lo + 1, column: offset - (starts[lo] ?? 0) + 1 }
}
