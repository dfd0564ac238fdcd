/**
 * The access log as operators get it: a real `mcp-edge start` (two workers and the primary writing to
 * one stdout pipe) under load, stopped with SIGTERM: every answered request has its line, no line is
 * cut or interleaved with another, and a line written when the gateway is idle still comes out
 * (the flush interval).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { sessionHash } from '../../gateway/log/redact.ts'
import { startGatewayProcess } from '../cluster/gateway-process.ts'

const ECHO = new URL('../../handlers/echo.ts', import.meta.url).pathname
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }

t.setTimeout(120_000)

async function openSession(url: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'log-test', version: '1' } } }),
  })
  await response.text()
  const session = response.headers.get('mcp-session-id')
  if (session === null) throw new Error(`initialize answered ${response.status} without a session`)
  await fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }).then((r) => r.text())
  return session
}

t.test('SIGTERM under load: every answered request has its line, every line whole', async (t) => {
  const gateway = await startGatewayProcess(t, { workers: 2, routes: [{ location: '/mcp', handler: ECHO, server: { name: 'echo', version: '1.0.0' } }] }, 2)
  let raw = ''
  gateway.child.stdout!.on('data', (chunk: string) => { raw += chunk })
  const url = `${gateway.url}/mcp`
  const session = await openSession(url)

  // Idle: one call's line comes out within the flush interval (1 s), not when the buffer fills.
  const before = raw.split('\n').length
  await fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', id: 'idle', method: 'tools/call', params: { name: 'echo', arguments: { message: 'idle' } } }) }).then((r) => r.text())
  await gateway.logged((line) => line.msg === 'mcp request' && line.method === 'tools/call', 5000)
  t.ok(raw.split('\n').length > before, 'an idle line is flushed by the interval')

  let answered = 1
  let sent = 1
  let stopping = false
  const loop = async (n: number): Promise<void> => {
    for (let i = 0; ; i++) {
      sent++
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { ...HEADERS, 'mcp-session-id': session },
          body: JSON.stringify({ jsonrpc: '2.0', id: `${n}-${i}`, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x'.repeat(64) } } }),
        })
        const body = await response.text()
        if (response.status === 200 && body.includes('Tool echo')) answered++
      } catch {
        if (stopping) return // connection refused or cut: the gateway is gone
      }
    }
  }
  const loops = Array.from({ length: 8 }, (_, n) => loop(n))
  await sleep(2000)
  stopping = true
  const code = await gateway.stop('SIGTERM')
  await Promise.all(loops)
  t.equal(code, 0, 'the primary exits 0 after the drain')

  const lines = raw.split('\n').filter((line) => line !== '')
  const parsed = lines.map((line) => { try { return JSON.parse(line) as Record<string, unknown> } catch { return undefined } })
  t.equal(parsed.filter((line) => line === undefined).length, 0, 'every line is whole JSON (no line cut or interleaved)')
  const calls = parsed.filter((line) => line?.msg === 'mcp request' && line.method === 'tools/call').length
  t.ok(answered > 20, `load was served (${answered} answered)`)
  t.ok(calls >= answered, `a line for every answered call (${calls} lines, ${answered} answered)`)
  t.ok(calls <= sent, `no line for a call never sent (${calls} lines, ${sent} sent)`)
  t.equal(parsed.filter((line) => line?.msg === 'primary stopped').length, 1, "the primary's last line is there")
  t.notOk(raw.includes(session), 'the session id is never logged')
  t.ok(raw.includes(`"sessionId":"${sessionHash(session) as string}"`), 'its short hash is')
})
