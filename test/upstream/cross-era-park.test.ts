// The parked call on its own: questions asked together go out in one round, a partial or malformed
// answer gets the rest asked again, an undeclared capability is refused to the upstream, a client
// that never retries gets the call cancelled, and a requestState is good for one retry. Plus the
// error codes mapped between eras.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { RpcError } from '../../gateway/client/errors.ts'
import type { ParkOutcome } from '../../gateway/store/bus-message.ts'
import { toSessionError, urlAccepted, urlElicitations } from '../../gateway/upstream/cross-era-errors.ts'
import { ParkingLot, type RoundSink } from '../../gateway/upstream/cross-era-park.ts'
import { EdgeCode, RpcCode } from '../../gateway/wire/errors.ts'

const sink: RoundSink = { progress: () => undefined, log: () => undefined }
// Long enough that a loaded machine never expires a park between two steps of a test.
const times = { roundMs: 30_000, parkMs: 30_000 }
/** For the test of the park deadline itself. */
const short = { roundMs: 30_000, parkMs: 300 }
const form = { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } }, _meta: { x: 1 } }
const sample = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }

t.test('two questions in one round; a partial, then a malformed answer: the rest is asked again', async (t) => {
  const lot = new ParkingLot(4)
  const call = lot.open(undefined, { elicitation: {}, sampling: {} }, times, {})!
  const upstream = new AbortController()
  const run = async () => {
    const [name, model] = await Promise.all([call.ask('elicitation/create', form, upstream.signal), call.ask('sampling/createMessage', sample, upstream.signal)])
    return { content: [{ type: 'text', text: `${String((name.content as { name: string }).name)} / ${String(model.model)}` }] }
  }
  const first = await call.start(run, sink, undefined)
  t.match(first, { kind: 'input', round: 1 })
  const asked = (first as Extract<ParkOutcome, { kind: 'input' }>).inputRequests
  t.same(Object.keys(asked).sort(), ['elicitation-0', 'sampling-1'], 'both in one input-required result')
  t.same(asked['elicitation-0'], { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: form.requestedSchema } }, 'the upstream params, without _meta')
  t.equal(lot.size, 1, 'parked')

  const second = await lot.resume(call.id, 1, undefined, { 'elicitation-0': { action: 'accept', content: { name: 'Ada' } } }, sink, undefined)
  t.not(second, 'gone')
  t.match(second, { kind: 'input', round: 2, inputRequests: { 'sampling-1': { method: 'sampling/createMessage' } } }, 'the unanswered one is asked again')
  t.notOk('elicitation-0' in (second as Extract<ParkOutcome, { kind: 'input' }>).inputRequests)

  t.match(await lot.resume(call.id, 1, undefined, {}, sink, undefined), { kind: 'error', code: RpcCode.InvalidParams }, 'the previous round’s state is used already')
  const third = await lot.resume(call.id, 2, undefined, { 'sampling-1': { model: 'no content' } }, sink, undefined)
  t.match(third, { kind: 'input', round: 3 }, 'a malformed answer counts as none')
  const done = await lot.resume(call.id, 3, undefined, { 'sampling-1': { role: 'assistant', model: 'm', content: { type: 'text', text: '…' } } }, sink, undefined)
  t.same(done, { kind: 'result', result: { content: [{ type: 'text', text: 'Ada / m' }] } }, 'the call went on to its result')
  t.equal(lot.size, 0, 'and left the lot')
  t.match(await lot.resume(call.id, 3, undefined, {}, sink, undefined), { kind: 'error', code: RpcCode.InvalidParams, message: /used already/ }, 'a replayed state is refused')
  t.equal(lot.resume('never-parked', 1, undefined, {}, sink, undefined), 'gone', 'an unknown park is gone (the caller replays)')
})

t.test('an undeclared capability is refused to the upstream; known answers skip the round', async (t) => {
  const lot = new ParkingLot(4)
  const call = lot.open('alice', { elicitation: { url: {} } }, times, { 'elicitation-0': { action: 'decline' } })!
  const signal = new AbortController().signal
  await t.rejects(call.ask('sampling/createMessage', sample, signal), { code: RpcCode.MethodNotFound }, 'no sampling declared')
  t.same(await call.ask('elicitation/create', { mode: 'url', message: 'go', url: 'https://example.com' }, signal), { action: 'decline' }, 'answered from the replayed state')
  await t.rejects(call.ask('elicitation/create', form, signal), { code: RpcCode.MethodNotFound }, 'url-only clients get no forms')
  t.equal(lot.resume(call.id, 0, 'mallory', {}, sink, undefined), 'gone', 'another principal finds nothing')
  call.cancel('done')
})

t.test('a client that never retries: the call is cancelled after parkMs; max bounds the lot', async (t) => {
  const lot = new ParkingLot(1)
  const call = lot.open(undefined, { elicitation: {} }, short, {})!
  t.equal(lot.open(undefined, {}, short, {}), undefined, 'max 1')
  let upstreamSignal: AbortSignal | undefined
  const run = () => {
    upstreamSignal = call.signal
    return call.ask('elicitation/create', form, new AbortController().signal)
  }
  t.match(await call.start(run, sink, undefined), { kind: 'input' })
  await sleep(short.parkMs + 100)
  t.ok(upstreamSignal?.aborted, 'the upstream call was cancelled')
  t.equal(lot.size, 0, 'the lot is free again')
  t.equal(lot.resume(call.id, 1, undefined, {}, sink, undefined), 'gone', 'a late retry replays (not refused)')
})

t.test('the client closing its stream mid-round cancels the upstream call', async (t) => {
  const lot = new ParkingLot(1)
  const call = lot.open(undefined, {}, times, {})!
  const client = new AbortController()
  const outcome = call.start(() => new Promise((_resolve, reject) => call.signal.addEventListener('abort', () => reject(new Error('cancelled')))), sink, client.signal)
  client.abort()
  t.match(await outcome, { kind: 'failure', timeout: false })
  t.ok(call.signal.aborted)
  t.equal(lot.size, 0)
})

t.test('error codes across the eras', async (t) => {
  const missing = toSessionError(new RpcError(RpcCode.MissingCapability, 'needs sampling', { requiredCapabilities: { sampling: {} } }), 'tools/call', 'docs')
  t.same([missing.code, missing.message, missing.data], [EdgeCode.MCP_EDGE_CLIENT_CAPABILITY_MISSING.rpc, 'needs sampling', { requiredCapabilities: { sampling: {} } }])
  for (const code of [RpcCode.HeaderMismatch, RpcCode.UnsupportedVersion]) {
    const mapped = toSessionError(new RpcError(code, 'no'), 'tools/call', 'docs')
    t.same([mapped.code, mapped.message], [RpcCode.InternalError, 'Upstream "docs" refused the gateway\'s request: no'], `${code}: the gateway's own request, nothing the client can fix`)
  }
  t.equal(toSessionError(new RpcError(RpcCode.InvalidParams, 'nope', { uri: 'x://y' }), 'resources/read', 'docs').code, RpcCode.ResourceNotFound)
  t.equal(toSessionError(new RpcError(RpcCode.InvalidParams, 'bad'), 'resources/read', 'docs').code, RpcCode.InvalidParams, 'without a uri it is what it says')
  t.equal(toSessionError(new RpcError(RpcCode.InvalidParams, 'nope', { uri: 'x://y' }), 'tools/call', 'docs').code, RpcCode.InvalidParams)
  t.same(urlElicitations({ elicitations: [{ mode: 'url', url: 'https://a', message: 'm', elicitationId: 'e' }, { nothing: true }] }), {
    'url-0': { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://a' } },
  }, '-32042 elicitations as input requests, without elicitationId')
  t.equal(urlElicitations({}), undefined)
  t.ok(urlAccepted({ 'url-0': { action: 'accept' } }))
  t.notOk(urlAccepted({ 'url-0': { action: 'decline' } }))
  t.notOk(urlAccepted({}))
})
