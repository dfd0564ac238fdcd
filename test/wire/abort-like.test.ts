// LightAbort: the AbortController stand-in the gateway's own layers pass each other (a proxied call's
// ctx, client request, transport exchange, connection), against what its users rely on.
import t from 'tap'
import { LightAbort, realSignal } from '../../gateway/wire/abort-like.ts'

t.test('listeners run once, in order; a removed one does not', async (t) => {
  const abort = new LightAbort()
  const calls: string[] = []
  const a = (): void => void calls.push('a')
  const b = (): void => void calls.push('b')
  const c = (): void => void calls.push('c')
  abort.addEventListener('abort', a)
  abort.addEventListener('abort', b)
  abort.addEventListener('abort', c)
  abort.removeEventListener('abort', b)
  t.equal(abort.aborted, false)
  abort.abort('stop')
  abort.abort('again')
  t.same(calls, ['a', 'c'], 'each listener once, the removed one never')
  t.equal(abort.reason, 'stop', 'the first reason stays')
  abort.addEventListener('abort', a)
  t.same(calls, ['a', 'c'], 'a listener added after the abort is not called')
  const lone = new LightAbort()
  lone.addEventListener('abort', a)
  lone.removeEventListener('abort', a)
  lone.abort()
  t.same(calls, ['a', 'c'], 'a single listener removed')
  t.equal((lone.reason as DOMException).name, 'AbortError', 'no reason: an AbortError, as AbortController gives')
})

t.test('signal: a real AbortSignal that follows it, made when read', async (t) => {
  const before = new LightAbort()
  const signal = before.signal
  t.equal(signal, before.signal, 'one signal per LightAbort')
  let fired = 0
  signal.addEventListener('abort', () => fired++)
  before.abort('late')
  t.equal(signal.aborted, true)
  t.equal(signal.reason, 'late')
  t.equal(fired, 1)
  const after = new LightAbort()
  after.abort('early')
  t.equal(after.signal.aborted, true, 'read after the abort: already aborted')
  t.equal(after.signal.reason, 'early')
  const native = new AbortController().signal
  t.equal(realSignal(native), native, 'an AbortSignal is its own')
  t.equal(realSignal(after), after.signal)
})
