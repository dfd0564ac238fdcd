/**
 * The scan a proxy trusts to pass an upstream's result on unparsed (client/json-scan.ts) accepts only
 * what JSON.parse reads as one object, and reads that object's `isError` as JSON.parse does; it
 * accepts every object JSON.stringify writes whose text has no escape (no key repeats in such
 * text), and refuses a key repeated in its object.
 */
import fc from 'fast-check'
import t from 'tap'
import { IS_ERROR, NOT_PLAIN, PLAIN, scanObject } from '../../gateway/client/json-scan.ts'

function parsedObject(text: string): { isError?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { isError?: unknown }) : undefined
  } catch {
    return undefined
  }
}

/** scanObject over all of `text`, checked against JSON.parse: false when the scan accepts what it must not. */
function sound(text: string): boolean {
  const scanned = scanObject(text, 0, text.length)
  if (scanned === NOT_PLAIN) return true
  const parsed = parsedObject(text)
  return parsed !== undefined && (scanned === IS_ERROR) === (parsed.isError === true)
}

/** Bits of JSON and near-JSON, joined at random: mostly invalid text, some valid. */
const piece = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '"a"', '"isError"', 'true', 'false', 'null', '0', '-1', '1.5', '1e3', '01', '1.', '.5', '-', 'tru', ' ', '\t', '\n', '\\', '\\u00', '\\u0041', '\\x', '\u0001', 'é', '"is\\u0045rror"')

t.test('what it accepts JSON.parse reads as one object, with the same isError', async (t) => {
  fc.assert(fc.property(fc.array(piece, { maxLength: 30 }).map((parts) => parts.join('')), sound), { numRuns: 10_000 })
  fc.assert(fc.property(fc.json(), (text) => sound(text) && sound(`{"v":${text}}`) && sound(`{"isError":${text}}`)), { numRuns: 5000 })
  // A valid object cut short or with a character changed.
  fc.assert(fc.property(fc.object(), fc.nat(), fc.constantFrom('"', '}', ']', ',', ':', '\\', 'x', ' '), (value, at, char) => {
    const text = JSON.stringify(value)
    const cut = at % (text.length + 1)
    return sound(text.slice(0, cut)) && sound(text.slice(0, cut) + char + text.slice(cut + 1))
  }), { numRuns: 5000 })
  t.pass('no text accepted that JSON.parse refuses or reads otherwise')
})

t.test('it accepts the objects JSON.stringify writes, escapes aside', async (t) => {
  fc.assert(fc.property(fc.object({ withNullPrototype: false }), fc.boolean(), (value, isError) => {
    const text = JSON.stringify({ ...value, isError })
    if (text.includes('\\') || text.includes('\n')) return true
    return scanObject(text, 0, text.length) === (isError ? IS_ERROR : PLAIN)
  }), { numRuns: 5000 })
  t.pass()
})

t.test('the cases that matter, by hand', async (t) => {
  const cases: [string, number][] = [
    ['{"content":[{"type":"text","text":"echo: p5"}]}', PLAIN],
    ['{"content":[],"isError":true}', IS_ERROR],
    ['{"isError":true,"isError":false}', NOT_PLAIN],
    ['{"a":{"b":1,"b":2}}', NOT_PLAIN],
    ['{"a":{"b":1},"c":{"b":2},"d":[{"b":1},{"b":2}]}', PLAIN],
    ['{"a":{"b":{"c":1},"c":2},"b":3}', PLAIN],
    ['{"a":"\\u0041","\\u0061":1}', NOT_PLAIN],
    [`{${Array.from({ length: 32 }, (_, k) => `"k${k}":${k}`).join(',')}}`, PLAIN],
    [`{${Array.from({ length: 33 }, (_, k) => `"k${k}":${k}`).join(',')}}`, NOT_PLAIN],
    ['{"isError":"true"}', PLAIN],
    ['{"nested":{"isError":true}}', PLAIN],
    [' {"a":1} ', PLAIN],
    ['{"a":1}\t', NOT_PLAIN],
    ['{"a":"x","b":"y\\"z","c":"\\\\"}', PLAIN],
    ['{"a":"\\"}', NOT_PLAIN],
    ['{"a":"tab\there"}', NOT_PLAIN],
    ['{"a":1},"id":2', NOT_PLAIN],
    ['{"a":1}}', NOT_PLAIN],
    ['{"a":\n1}', NOT_PLAIN],
    ['{"is\\u0045rror":true}', NOT_PLAIN],
    ['{"a":"\\u0045"}', PLAIN],
    ['[1]', NOT_PLAIN],
    ['{"a":01}', NOT_PLAIN],
    ['{"a":"x\u0001"}', NOT_PLAIN],
    ['{"a":[1,]}', NOT_PLAIN],
    ['{"a":1,}', NOT_PLAIN],
    ['{"a" : -0.5e+3 , "b" : [ null , true , false , {} , [] ] }', PLAIN],
    [`{"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, PLAIN],
  ]
  for (const [text, expected] of cases) t.equal(scanObject(text, 0, text.length), expected, text.slice(0, 60))
  const framed = '{"jsonrpc":"2.0","id":3,"result":{"a":1}}'
  t.equal(scanObject(framed, 33, framed.length - 1), PLAIN, 'a span of a longer text')
  t.equal(scanObject(framed, 33, framed.length), NOT_PLAIN, 'the span must end where the object does')
})
