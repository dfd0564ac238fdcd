/**
 * JSON with object keys sorted at every depth, so equal values give equal text whatever order their
 * keys came in: what the audit record's argument digest, the result cache's key and the signed
 * request state's hash are taken over. One definition, so the three can never disagree.
 */

/** JSON with object keys sorted at every depth: the same arguments always digest the same. */
export function canonicalJson(value: unknown): string {
  // Most arguments are canonical as sent (one key, or keys in order): V8's own serialiser then writes
  // the same text in one pass, with no string per key and level built and joined.
  if (isCanonical(value)) return JSON.stringify(value) ?? 'null'
  return sortedJson(value)
}

/** True when JSON.stringify writes `value` as canonicalJson would: keys in order, no undefined member, no toJSON. */
function isCanonical(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  if (Array.isArray(value)) {
    for (const item of value) if (!isCanonical(item)) return false
    return true
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false
  let previous: string | undefined
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false
    if (previous !== undefined && !(previous < key)) return false
    const member = (value as Record<string, unknown>)[key]
    if (member === undefined || !isCanonical(member)) return false
    previous = key
  }
  return true
}

function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`
  const keys = Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson((value as Record<string, unknown>)[key])}`).join(',')}}`
}
