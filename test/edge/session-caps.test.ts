/**
 * Sessions per client and per route (issue 26, rows 3 and 4): 100 addresses × 100 sessions filled
 * `max_sessions` in 2 s, and 3,485 sessions of 527 KB each held 2 GB. A client (principal, else
 * address; an IPv6 address by its /64, which one host is given whole) holds `sessions_per_principal`,
 * the route `max_sessions`; each refusal carries Retry-After and the request's id; and the memory of
 * sessions filled to their per-session caps is given back when they end.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import t from 'tap'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { addressKey } from '../../gateway/wire/caller.ts'
import { fixture, gatewayWith } from '../e2e/harness.ts'

t.setTimeout(120_000)
v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void
const MIB = 1024 * 1024

t.test('an IPv6 client is its /64; IPv4 (mapped or not) is its address', async (t) => {
  t.equal(addressKey('203.0.113.7'), '203.0.113.7')
  t.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64')
  t.equal(addressKey('2001:0db8:0001:0002::1'), '2001:db8:1:2::/64', 'leading zeros and :: expanded')
  t.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone is not part of the client')
  t.equal(addressKey('::1'), '0:0:0:0::/64')
})

const initialize = (url: string, id: string, forwardedFor?: string, capabilities: object = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'x', version: '1' } } }),
  })

t.test('per client and per route: 429 and 503, each with Retry-After and the id; addresses of one /64 are one client', async (t) => {
  const route = { location: '/s', handler: fixture('live'), server: { name: 's', version: '1.0.0' }, max_sessions: 6, limits: { sessions_per_principal: 2 } }
  const gateway = await gatewayWith(t, [route], { trust_proxy: true })
  const url = `${gateway.url}/s`
  for (const [n, from] of ['2001:db8:0:1::a', '2001:db8:0:1::b'].entries()) t.equal((await initialize(url, `ok${n}`, from)).status, 200)
  const sameHost = await initialize(url, 'same-64', '2001:db8:0:1:ffff::1')
  t.equal(sameHost.status, 429, 'a third address of the same /64 is the same client')
  t.equal(sameHost.headers.get('retry-after'), '10')
  t.match(await sameHost.json(), { id: 'same-64', error: { code: -32000, message: /sessions_per_principal/ } })
  for (const [n, from] of ['2001:db8:0:2::1', '2001:db8:0:2::2', '198.51.100.1', '198.51.100.2'].entries()) t.equal((await initialize(url, `more${n}`, from)).status, 200)
  const full = await initialize(url, 'full', '198.51.100.3')
  t.equal(full.status, 503, 'max_sessions reached')
  t.equal(full.headers.get('retry-after'), '10')
  t.match(await full.json(), { id: 'full', error: { code: -32000, message: /max_sessions/ } })
})

t.test('sessions filled to their per-session caps are given back when they end', async (t) => {
  const route = { location: '/s', handler: fixture('live'), server: { name: 's', version: '1.0.0' }, limits: { sessions_per_principal: 0 } }
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/s`
  // Capabilities at limits.client_capabilities (16 KB): the most a session keeps of them.
  const capabilities = { experimental: { pad: 'c'.repeat(16_000) } }
  // One batch first, begun and ended, so what is measured is what sessions hold, not the code this
  // process compiles and the modules it loads on first use (0.1 MiB short of the bound once).
  for (const answer of await Promise.all(Array.from({ length: 20 }, (_, n) => initialize(url, `w${n}`, undefined, capabilities)))) {
    await answer.text()
    await (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': answer.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' } })).text()
  }
  gc()
  const before = process.memoryUsage()
  const ids: string[] = []
  for (let batch = 0; batch < 400; batch += 20) {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => initialize(url, `i${batch + n}`, undefined, capabilities)))
    for (const answer of answers) {
      await answer.text()
      ids.push(answer.headers.get('mcp-session-id')!)
    }
  }
  gc()
  const held = process.memoryUsage()
  t.comment(`400 sessions of 16 KB capabilities: heap +${((held.heapUsed - before.heapUsed) / MIB).toFixed(1)} MiB`)
  t.ok(held.heapUsed - before.heapUsed > 4 * MIB, 'they are held (the measure sees them)')
  for (const id of ids) {
    const answer = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } })
    await answer.text()
  }
  t.equal(await gateway.store.count('/s'), 0, 'every session ended')
  gc()
  const after = process.memoryUsage()
  t.comment(`ended: heap ${((after.heapUsed - before.heapUsed) / MIB).toFixed(1)} MiB from the start, RSS ${((after.rss - before.rss) / MIB).toFixed(1)} MiB`)
  t.ok(after.heapUsed - before.heapUsed < 4 * MIB, 'the heap is given back')
  t.ok(after.rss - before.rss < 96 * MIB, 'RSS too')
})

t.test('sessions\' own data in all: over store.session_bytes_total a new session gets 503 with Retry-After; an ended one gives its share back', async (t) => {
  const route = { location: '/s', handler: fixture('live'), server: { name: 's', version: '1.0.0' }, limits: { sessions_per_principal: 0 } }
  const gateway = await gatewayWith(t, [route], { store: { type: 'memory', session_bytes_total: 40_000 } })
  const store = gateway.store as MemoryStore
  const url = `${gateway.url}/s`
  const capabilities = { experimental: { pad: 'c'.repeat(16_000) } }
  const first = await initialize(url, 'a', undefined, capabilities)
  await first.text()
  const second = await initialize(url, 'b', undefined, capabilities)
  await second.text()
  t.same([first.status, second.status], [200, 200])
  const third = await initialize(url, 'c', undefined, capabilities)
  t.equal(third.status, 503)
  t.equal(third.headers.get('retry-after'), '10')
  t.match(await third.json(), { jsonrpc: '2.0', id: 'c', error: { code: -32000, message: /store\.session_bytes_total/ } })
  t.equal(await gateway.store.count('/s'), 2, 'the refused session holds nothing')
  const held = store.heldDataBytes
  await (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': first.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' } })).text()
  t.ok(store.heldDataBytes <= held - 16_000, 'the ended session gave its share back')
  const again = await initialize(url, 'd', undefined, capabilities)
  await again.text()
  t.equal(again.status, 200, 'and a new one is served')
})

t.test('the memory store counts subscriptions, hidden names and documents, and refuses past the total', async (t) => {
  const store = new MemoryStore({ eventCapacity: 16, cacheTtl: 60, sessionBytesTotal: 10_000 })
  t.teardown(() => store.close())
  const record = (id: string) => ({ id, route: '/r', protocolVersion: '2025-11-25', clientInfo: undefined, clientCapabilities: {}, principal: undefined, createdAt: 0, initialized: true, logLevel: undefined, subscriptions: [], hidden: [] })
  await store.create(record('s'), 60_000)
  const start = store.heldDataBytes
  await store.update('s', { subscribe: 'u'.repeat(4000) })
  await store.update('s', { hide: 'tool:' + 'h'.repeat(3000) })
  t.equal(store.heldDataBytes, start + 4000 + 3005)
  await t.rejects(store.update('s', { subscribe: 'v'.repeat(4000) }), { code: 'MCP_EDGE_SESSION_DATA_FULL', status: 503 })
  await t.rejects(store.writeDoc({ session: 's', name: 'state' }, 0, 'x'.repeat(4000)), { code: 'MCP_EDGE_SESSION_DATA_FULL' })
  await store.update('s', { unsubscribe: 'u'.repeat(4000) })
  t.equal(store.heldDataBytes, start + 3005, 'an unsubscribe gives its bytes back')
  t.same(await store.writeDoc({ session: 's', name: 'state' }, 0, 'x'.repeat(4000)), { version: 1 }, 'now the document fits')
  await store.delete('s')
  t.equal(store.heldDataBytes, 0, 'the ended session gives everything back')
})

t.test('one principal\'s sessions together: over store.session_bytes_per_principal its new session gets 429; another principal is served', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-principal-bytes-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const keyOf = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' }
  const sha = (key: string) => createHash('sha256').update(key).digest('hex')
  writeFileSync(path.join(folder, 'keys.yaml'), `keys:\n  - sha256: ${sha(keyOf.alice)}\n    principal: alice\n  - sha256: ${sha(keyOf.bob)}\n    principal: bob\n`)
  // No session quota: only the byte bound stands between one principal and the whole store.
  const route = { location: '/s', handler: fixture('live'), server: { name: 's', version: '1.0.0' }, limits: { sessions_per_principal: 0 } }
  const gateway = await gatewayWith(t, [route], { auth: { api_keys: path.join(folder, 'keys.yaml') }, store: { type: 'memory', session_bytes_per_principal: 40_000 } })
  const store = gateway.store as MemoryStore
  const url = `${gateway.url}/s`
  const capabilities = { experimental: { pad: 'c'.repeat(16_000) } }
  const open = async (who: keyof typeof keyOf, id: string) => {
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': keyOf[who] },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'x', version: '1' } } }),
    })
    return { status: answer.status, retryAfter: answer.headers.get('retry-after'), session: answer.headers.get('mcp-session-id'), body: await answer.json() as unknown }
  }
  const first = await open('alice', 'a1')
  const second = await open('alice', 'a2')
  t.same([first.status, second.status], [200, 200])
  const third = await open('alice', 'a3')
  t.equal(third.status, 429, 'alice\'s third session would pass her share')
  t.equal(third.retryAfter, '10')
  t.match(third.body, { jsonrpc: '2.0', id: 'a3', error: { code: -32000, message: /store\.session_bytes_per_principal/ } })
  t.ok(store.principalDataBytes('alice') <= 40_000, `alice holds ${store.principalDataBytes('alice')} bytes`)
  t.equal((await open('bob', 'b1')).status, 200, 'bob is served: the total is far')
  await (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': first.session!, 'mcp-protocol-version': '2025-11-25', 'x-api-key': keyOf.alice } })).text()
  t.equal((await open('alice', 'a4')).status, 200, 'an ended session gave alice her share back')
})

t.test('the per-principal share covers subscriptions and documents too; sessions without a principal count toward the total only', async (t) => {
  const store = new MemoryStore({ eventCapacity: 16, cacheTtl: 60, sessionBytesPerPrincipal: 10_000, sessionBytesTotal: 100_000 })
  t.teardown(() => store.close())
  const record = (id: string, principal: string | undefined) => ({ id, route: '/r', protocolVersion: '2025-11-25', clientInfo: undefined, clientCapabilities: {}, principal, createdAt: 0, initialized: true, logLevel: undefined, subscriptions: [], hidden: [] })
  await store.create(record('a1', 'alice'), 60_000)
  await store.create(record('a2', 'alice'), 60_000)
  await store.update('a1', { subscribe: 'u'.repeat(6000) })
  await t.rejects(store.update('a2', { subscribe: 'v'.repeat(6000) }), { code: 'MCP_EDGE_PRINCIPAL_SESSION_DATA_FULL', status: 429 }, 'a subscription on her other session')
  await t.rejects(store.writeDoc({ session: 'a2', name: 'state' }, 0, 'x'.repeat(6000)), { code: 'MCP_EDGE_PRINCIPAL_SESSION_DATA_FULL' }, 'a document too')
  await store.create(record('anon', undefined), 60_000)
  t.same(await store.writeDoc({ session: 'anon', name: 'state' }, 0, 'x'.repeat(20_000)), { version: 1 }, 'no principal: only the total applies')
  await store.update('a1', { unsubscribe: 'u'.repeat(6000) })
  t.same(await store.writeDoc({ session: 'a2', name: 'state' }, 0, 'x'.repeat(6000)), { version: 1 }, 'an unsubscribe gave her share back')
  await store.delete('a1')
  await store.delete('a2')
  t.equal(store.principalDataBytes('alice'), 0, 'her ended sessions gave everything back')
})
