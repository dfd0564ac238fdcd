/**
 * A property over stdio lines (issue 16, the resilience suite): the composition `mcp-edge stdio`
 * runs (gateway/server/stdio.ts: the route's endpoint on a memory store behind serveStdio), here in
 * this process on a pair of streams so the event loop watched is the gateway's. Each case writes a
 * few lines — JSON-RPC messages, raw text, bytes that are not UTF-8, lines over the size limit, deep
 * nesting, blank lines and CRLF — cut into chunks at random places, ten cases at a time on the one
 * session. Whatever arrives: every request read is answered once with its id, every line out is
 * well-formed JSON-RPC, the session never ends, and the event loop is never blocked over the bound.
 */
import fc from 'fast-check'
import { PassThrough } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { codecFromConfig } from '../../gateway/protocol/stateless/request-state.ts'
import { loadHandler } from '../../gateway/server/load-handler.ts'
import { buildEndpoint } from '../../gateway/server/route-endpoint.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { serveStdio } from '../../gateway/transport/stdio.ts'
import { HANDLER } from '../fixtures/transport-gateway.ts'
import { CaseFailure, checkResponse, envelope, fuzz, idArb, METHODS, nested, paramsArb } from './fuzz-kit.ts'

t.setTimeout(180_000)
const MAX_LINE = 65_536

const lineArb = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('message' as const), method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 })), params: paramsArb, stateless: fc.boolean(),
    id: fc.oneof({ arbitrary: fc.constant('unique' as const), weight: 6 }, { arbitrary: fc.constant('none' as const), weight: 1 }, { arbitrary: idArb, weight: 2 }) }), weight: 10 },
  { arbitrary: fc.record({ kind: fc.constant('raw' as const), text: fc.string({ maxLength: 100 }).map((text) => text.replace(/\n/g, ' ')) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('notUtf8' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 50 }).map((bytes) => bytes.map((byte) => (byte === 0x0a ? 0xff : byte))) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('oversize' as const), extra: fc.integer({ min: 1, max: 2000 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('deep' as const), depth: fc.integer({ min: 100, max: 3000 }), open: fc.constantFrom('[' as const, '{"a":' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('blank' as const), text: fc.constantFrom('', ' ', '\r', '\t \r') }), weight: 1 },
)
const caseArb = fc.record({ lines: fc.array(lineArb, { minLength: 1, maxLength: 5 }), crlf: fc.boolean(), cuts: fc.array(fc.nat(), { maxLength: 4 }) })
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

let counter = 0

t.test('stdio lines', async (t) => {
  const config = configFromObject({ body_limit: MAX_LINE, log: { level: 'silent' }, routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'transport', version: '1.0.0' } }] }, '<test>')
  const route = config.routes[0]!
  const store = new MemoryStore({ eventCapacity: 1, cacheTtl: 1 })
  const logger = pino({ level: 'silent' })
  const endpoint = await buildEndpoint(route, await loadHandler(route.handler), store, logger, codecFromConfig(config.request_state))
  const input = new PassThrough()
  const output = new PassThrough()
  const server = serveStdio(endpoint, { input, output, maxMessageSize: MAX_LINE, logger })
  let ended = false
  void server.done.then(() => (ended = true))
  t.teardown(async () => {
    input.end()
    await server.done
    endpoint.close()
    await store.close()
  })

  /** Answers by id, as they come; and every line out checked. */
  const waiting = new Map<string | number, (line: string) => void>()
  const out: string[] = []
  let partial = ''
  output.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      out.push(line)
      let id: unknown
      try {
        id = (JSON.parse(line) as { id?: unknown }).id
      } catch { /* checked by the case that waits, or at the end */ }
      const wake = waiting.get(id as string | number)
      if (wake !== undefined) wake(line)
    }
  })
  const request = (message: object, id: string | number): Promise<string> => new Promise((resolve) => {
    waiting.set(id, (line) => { waiting.delete(id); resolve(line) })
    input.write(`${JSON.stringify(message)}\n`)
  })
  const init = JSON.parse(await request({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, 'init'))
  t.equal(init.result?.protocolVersion, '2025-11-25', 'the session is open')
  input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

  let writing = Promise.resolve()
  const one = async (c: Case): Promise<void> => {
    const owed = new Map<string | number, Promise<string>>()
    const parts: Buffer[] = []
    for (const line of c.lines) {
      switch (line.kind) {
        case 'message': {
          const body: Record<string, unknown> = { jsonrpc: '2.0', method: line.method }
          if (line.id === 'unique') {
            // Outside what idArb makes, so a random id's answer is never taken for a unique one's.
            const id = counter % 2 === 0 ? 2 ** 40 + counter++ : `unique-${counter++}-${'#'.repeat(20)}`
            body.id = id
            owed.set(id, new Promise((resolve) => waiting.set(id, (text) => { waiting.delete(id); resolve(text) })))
          } else if (line.id !== 'none') body.id = line.id
          let params = line.params
          if (line.stateless && (params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params)))) params = { ...(params as object | undefined), _meta: envelope }
          if (params !== undefined) body.params = params
          parts.push(Buffer.from(JSON.stringify(body)))
          break
        }
        case 'raw':
        case 'blank':
          parts.push(Buffer.from(line.text))
          break
        case 'notUtf8':
          parts.push(Buffer.from(line.bytes))
          break
        case 'oversize':
          parts.push(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'ping', params: { pad: 'x'.repeat(MAX_LINE + line.extra) } })))
          break
        case 'deep':
          parts.push(Buffer.from(`{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":${nested(line.depth, line.open)}}}`))
          break
      }
      parts.push(Buffer.from(c.crlf ? '\r\n' : '\n'))
    }
    // The lines in chunks cut anywhere, as a pipe delivers them: one chunk per turn of the event
    // loop (a pair of streams in one process would otherwise run every case in one turn), and one
    // case's chunks after another's (a pipe has one writer at a time).
    const bytes = Buffer.concat(parts)
    const cuts = [...new Set(c.cuts.map((cut) => cut % bytes.length))].sort((a, b) => a - b)
    const written = writing.then(async () => {
      let from = 0
      for (const cut of [...cuts, bytes.length]) {
        input.write(bytes.subarray(from, cut))
        from = cut
        await new Promise(setImmediate)
      }
    })
    writing = written
    await written

    for (const [id, answer] of owed) {
      const timeout = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new CaseFailure(`no answer within 10 s to id ${JSON.stringify(id)}`, c, out.slice(-5).join('\n'))), 10_000).unref())
      checkResponse(await Promise.race([answer, timeout]), id, c)
    }
    if (ended) throw new CaseFailure('the stdio session ended', c, out.slice(-5).join('\n'))
  }

  let checked = 0
  await fuzz(t, { name: 'stdio lines', arbitrary: caseArb, cases: 2400, batch: 10, run: async (batch) => {
    await Promise.all(batch.map(one))
    for (; checked < out.length; checked++) checkResponse(out[checked]!, undefined, { line: checked })
  } })
  t.notOk(ended, 'the session is still open')
  const last = JSON.parse(await request({ jsonrpc: '2.0', id: 'last', method: 'ping' }, 'last'))
  t.same(last, { jsonrpc: '2.0', id: 'last', result: {} }, 'and serves on')
})
