/**
 * An `openapi:` upstream's document is read at start and again on every reload, as an operator does it
 * (`mcp-edge start`, then `mcp-edge reload`, real processes): an operation added to the document is a
 * tool after the reload, in the same session; a document that turned invalid is refused by the reload
 * (which says why) and the gateway keeps serving the tools it had.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import t from 'tap'
import { reapOnExit } from '../store/reaper.ts'
import { eventually, freePort } from '../fixtures/waiting.ts'

t.setTimeout(120_000)
const BIN = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))

const operation = (operationId: string, summary: string) => ({
  operationId,
  summary,
  parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
  responses: { 200: { description: 'the item', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, via: { type: 'string' } } } } } } },
})

t.test('a document changed under a running gateway: reload brings its new operation; an invalid one is refused', async (t) => {
  let version = 1
  const api = Fastify()
  api.get('/openapi.json', async () => ({
    openapi: '3.1.0',
    info: version === 3 ? { title: 'items' } : { title: 'items', version: `${version}.0.0` },
    paths: {
      '/items/{id}': { get: operation('getItem', 'Get an item') },
      ...(version >= 2 ? { '/archive/{id}': { get: operation('getArchived', 'Get an archived item') } } : {}),
    },
  }))
  api.get('/items/:id', async (request) => ({ id: (request.params as { id: string }).id, via: 'items' }))
  api.get('/archive/:id', async (request) => ({ id: (request.params as { id: string }).id, via: 'archive' }))
  await api.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => api.close())
  const origin = `http://127.0.0.1:${(api.server.address() as { port: number }).port}`

  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-openapi-reload-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = await freePort()
  const config = path.join(dir, 'gateway.json')
  writeFileSync(config, JSON.stringify({
    listen: { host: '127.0.0.1', port },
    log: { level: 'warn' },
    drain_timeout: 2,
    routes: [{ location: '/items', server: { name: 'items', version: '1.0.0' }, upstreams: [{ name: 'items', openapi: { document: `${origin}/openapi.json`, base_url: origin, operations: ['*'] } }] }],
  }))
  const child = spawn(process.execPath, [BIN, 'start', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGKILL')
    await once(child, 'exit')
  })
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true, 30_000).catch(() => {
    throw new Error(`the gateway did not start:\n${output}`)
  })

  const client = new Client({ name: 'reload', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/items`))
  await client.connect(transport)
  t.teardown(() => client.close())
  t.same((await client.listTools()).tools.map((tool) => tool.name), ['getItem'], 'version 1: one operation')

  version = 2
  const reloaded = await reload(config)
  t.equal(reloaded.code, 0, `reload applied: ${reloaded.out}`)
  await eventually(async () => (await client.listTools()).tools.length === 2, 20_000)
  t.same((await client.listTools()).tools.map((tool) => tool.name), ['getItem', 'getArchived'], 'version 2, read again on reload: its new operation is a tool, in the same session')
  t.match((await client.callTool({ name: 'getArchived', arguments: { id: 'a1' } })).structuredContent, { id: 'a1', via: 'archive' })

  version = 3
  const refused = await reload(config)
  t.equal(refused.code, 2, 'an invalid document: the reload is refused')
  t.match(refused.out, /upstream items \(openapi\): the document http:\/\/127\.0\.0\.1:\d+\/openapi\.json is not valid OpenAPI: .*version/, 'and says why')
  t.same((await client.listTools()).tools.map((tool) => tool.name), ['getItem', 'getArchived'], 'the gateway serves what it served')
  t.match((await client.callTool({ name: 'getItem', arguments: { id: 'i1' } })).structuredContent, { id: 'i1', via: 'items' })
})

function reload(config: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'reload', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.on('close', (code) => resolve({ code, out }))
  })
}
