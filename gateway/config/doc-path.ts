/**
 * Addresses of nodes in a config document. Positions are indexed by JSON pointer (what ajv reports
 * as `instancePath`); users read the dotted form (`routes[0].pagination.tools`).
 */

/** Keys and sequence indexes from the document root to a node. */
export type DocPath = ReadonlyArray<string | number>

/** The JSON pointer (RFC 6901) of a path; `''` is the root. */
export function toPointer(path: DocPath): string {
  return path.map((seg) => '/' + String(seg).replaceAll('~', '~0').replaceAll('/', '~1')).join('')
}

/** The dotted form of a path: `routes[0].server.name`; keys that are not identifiers are quoted. */
export function toDotted(path: DocPath): string {
  let out = ''
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += out === '' ? seg : `.${seg}`
    else out += `[${JSON.stringify(seg)}]`
  }
  return out
}

/** Splits a JSON pointer; segments that index an array in `doc` become numbers. */
export function fromPointer(pointer: string, doc: unknown): Array<string | number> {
  if (pointer === '') return []
  const path: Array<string | number> = []
  let node: unknown = doc
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (Array.isArray(node) && /^\d+$/.test(seg)) {
      path.push(Number(seg))
      node = node[Number(seg)]
    } else {
      path.push(seg)
      node = isRecord(node) ? node[seg] : undefined
    }
  }
  return path
}

/** True for a plain object (what a YAML mapping loads as). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
