/**
 * Tool search (`catalogue: search`) driven by the official SDK client: tools/list shows the
 * meta-tools only; search_tools, describe_tool and call_tool reach the route's tools; call_tool
 * checks arguments against the tool's schema and is refused exactly as a direct call (unknown tool,
 * insufficient scope); a scope-restricted tool is neither found, described, loaded nor callable by a
 * principal without the scope, and is by one with it; the filter phase sees the underlying tool's
 * name and its list filtering applies to search; load_tools puts tools in the session's own
 * tools/list and sends list_changed. The MCP Inspector CLI lists and calls the same route.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { eventually } from '../fixtures/waiting.ts'

t.setTimeout(90_000)
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const ADMIN_KEY = 'k-admin-0123456789abcdef'
const USER_KEY = 'k-user-0123456789abcdef'
const SECRET = 'rotate_database_credentials'

interface ToolResult { content: Array<{ type: string; text: string }>; isError?: boolean; structuredContent?: { tools?: Array<{ name: string }> } }
const textOf = (result: unknown): string => (result as ToolResult).content.map((block) => block.text).join('\n')
const hitNames = (result: unknown): string[] => ((result as ToolResult).structuredContent?.tools ?? []).map((tool) => tool.name)

t.test('tool search over a 281-tool handler route', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-search-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const keys = path.join(folder, 'keys.yaml')
  const sha = (key: string): string => createHash('sha256').update(key).digest('hex')
  writeFileSync(keys, `keys:\n  - sha256: ${sha(ADMIN_KEY)}\n    principal: admin\n    scopes: [db.admin]\n  - sha256: ${sha(USER_KEY)}\n    principal: user\n    scopes: []\n`)
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    routes: [{
      location: '/tools',
      handler: fixture('generated-tools.ts'),
      server: { name: 'big', version: '1.0.0' },
      options: { count: 280, secret: true },
      catalogue: 'search',
      search: { max_loaded: 3 },
      auth: { api_keys: keys },
      scopes: { tools: { [SECRET]: ['db.admin'] } },
      phases: { filter: fixture('filter.ts') },
    }, {
      // The Inspector CLI this project can install (0.15: the 2.x line needs Node 22.19) sends no headers and posts to /mcp: an open route there.
      location: '/mcp',
      handler: fixture('generated-tools.ts'),
      server: { name: 'big-open', version: '1.0.0' },
      options: { count: 280 },
      catalogue: 'search',
      limits: { rate: [{ key: 'ip', tool: 'cms_*', limit: 2, window: 60 }] },
    }],
  }, '<test>')
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  const url = `${gateway.url}/tools`

  const connect = async (key: string): Promise<Client> => {
    const client = new Client({ name: 'search-test', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-api-key': key } } })
    await client.connect(transport)
    t.teardown(async () => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
    })
    return client
  }
  const admin = await connect(ADMIN_KEY)
  const user = await connect(USER_KEY)

  t.test('tools/list is the meta-tools, whatever the route holds', async (t) => {
    const tools = (await user.listTools()).tools
    t.same(tools.map((tool) => tool.name), ['search_tools', 'describe_tool', 'call_tool', 'load_tools'])
    t.ok(tools.every((tool) => typeof tool.description === 'string' && tool.inputSchema.type === 'object'), 'each with a description and an input schema')
  })

  t.test('search finds tools by words in their descriptions, describe gives the full schema', async (t) => {
    const found = await user.callTool({ name: 'search_tools', arguments: { query: 'export invoices as a CSV spreadsheet', limit: 3 } })
    t.equal(hitNames(found)[0], 'billing_export_invoice', 'the best hit')
    t.equal(hitNames(found).length, 3, 'limit honoured')
    t.match(textOf(found), /billing_export_invoice\(id\?, fields\?, limit\?\)/, 'the hit names its arguments')
    const described = await user.callTool({ name: 'describe_tool', arguments: { name: 'billing_export_invoice' } })
    t.match(JSON.parse(textOf(described)), { name: 'billing_export_invoice', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } })
    const unknown = await user.callTool({ name: 'describe_tool', arguments: { name: 'no_such_tool' } })
    t.equal(unknown.isError, true)
    const empty = await user.callTool({ name: 'search_tools', arguments: { query: '' } })
    t.equal(empty.isError, true, 'an empty query is an isError result')
    const long = await user.callTool({ name: 'search_tools', arguments: { query: 'x'.repeat(501) } })
    t.match(textOf(long), /at most 500/, 'search.max_query')
  })

  t.test('call_tool calls the tool, its arguments checked; refusals are the direct call’s', async (t) => {
    const called = await user.callTool({ name: 'call_tool', arguments: { name: 'crm_get_contact', arguments: { id: 'c-7' } } })
    t.same(called.structuredContent, { tool: 'crm_get_contact', args: { id: 'c-7' } })
    const bad = await user.callTool({ name: 'call_tool', arguments: { name: 'crm_get_contact', arguments: { id: 7 } } })
    t.equal(bad.isError, true)
    t.match(textOf(bad), /Invalid arguments: \/id must be string/)
    const direct = await user.callTool({ name: 'crm_get_contact', arguments: { id: 'c-8' } }).catch((error: Error) => error)
    t.same((direct as ToolResult).structuredContent, { tool: 'crm_get_contact', args: { id: 'c-8' } }, 'a direct call still works')
    const unknownDirect = await user.callTool({ name: 'no_such_tool', arguments: {} }).catch((error: Error) => error.message)
    const unknownVia = await user.callTool({ name: 'call_tool', arguments: { name: 'no_such_tool', arguments: {} } }).catch((error: Error) => error.message)
    t.match(unknownVia, /Unknown tool: no_such_tool/)
    t.equal(unknownVia, unknownDirect, 'the same refusal as a direct call')
  })

  t.test('a scope-restricted tool: not found, described, loaded nor called without the scope', async (t) => {
    const query = { query: 'rotate the database password credentials' }
    t.notOk(hitNames(await user.callTool({ name: 'search_tools', arguments: query })).includes(SECRET), 'not found by a principal without db.admin')
    t.equal(hitNames(await admin.callTool({ name: 'search_tools', arguments: query }))[0], SECRET, 'found by one with it')
    t.equal((await user.callTool({ name: 'describe_tool', arguments: { name: SECRET } })).isError, true)
    t.equal((await user.callTool({ name: 'load_tools', arguments: { names: [SECRET] } })).isError, true)
    const direct = await user.callTool({ name: SECRET, arguments: { database: 'prod' } }).catch((error: Error) => error.message)
    const via = await user.callTool({ name: 'call_tool', arguments: { name: SECRET, arguments: { database: 'prod' } } }).catch((error: Error) => error.message)
    t.match(via, /Forbidden: tool rotate_database_credentials needs scope db.admin/, 'the edge refuses it (403) as it refuses a direct call')
    const withoutId = (message: unknown): string => String(message).replace(/"id":\d+/, '"id":N')
    t.equal(withoutId(via), withoutId(direct), 'refused as a direct call is')
    t.equal(textOf(await admin.callTool({ name: 'call_tool', arguments: { name: SECRET, arguments: { database: 'prod' } } })), 'rotated prod')
  })

  t.test('the filter phase sees the underlying tool, and its list filtering holds for search', async (t) => {
    const via = await user.callTool({ name: 'call_tool', arguments: { name: 'crm_delete_contact', arguments: { id: 'c-1' } } }).catch((error: Error) => error.message)
    t.match(via, /withheld/, 'the filter withheld crm_delete_contact called through call_tool')
    const hits = hitNames(await user.callTool({ name: 'search_tools', arguments: { query: 'archive contact', limit: 25 } }))
    t.ok(hits.length > 0)
    t.notOk(hits.some((name) => name.startsWith('crm_archive_')), 'a tool the filter drops from tools/list is not found')
  })

  t.test('load_tools: the session’s own tools/list grows, with list_changed', async (t) => {
    let changed = 0
    admin.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++)
    const loaded = await admin.callTool({ name: 'load_tools', arguments: { names: ['hr_get_employee', SECRET] } })
    t.notOk(loaded.isError, textOf(loaded))
    await eventually(() => changed > 0, 10_000)
    t.same((await admin.listTools()).tools.map((tool) => tool.name).slice(4), ['hr_get_employee', SECRET])
    t.equal(textOf(await admin.callTool({ name: SECRET, arguments: { database: 'x' } })), 'rotated x', 'a loaded tool is called directly')
    t.same((await user.listTools()).tools.map((tool) => tool.name).length, 4, "another session's list is its own")
    const over = await admin.callTool({ name: 'load_tools', arguments: { names: ['hr_list_employee', 'hr_create_employee'] } })
    t.match(textOf(over), /at most 3 \(search.max_loaded\)/, 'search.max_loaded')
  })

  t.test("per-tool rate limits count call_tool as the tool it calls, in the tool's own bucket", async (t) => {
    const client = new Client({ name: 'limits', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`))
    await client.connect(transport)
    t.teardown(async () => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
    })
    t.notOk((await client.callTool({ name: 'cms_get_article', arguments: { id: 'a' } })).isError, 'a direct call: 1 of 2')
    t.notOk((await client.callTool({ name: 'call_tool', arguments: { name: 'cms_list_article', arguments: {} } })).isError, 'through call_tool: 2 of 2')
    const over = await client.callTool({ name: 'call_tool', arguments: { name: 'cms_get_article', arguments: { id: 'b' } } })
    t.equal(over.isError, true)
    t.match(textOf(over), /Rate limit reached: at most 2/, 'the third is over the cms_* limit')
    t.notOk((await client.callTool({ name: 'call_tool', arguments: { name: 'wiki_list_page', arguments: {} } })).isError, 'another tool is not in that bucket')
    t.notOk((await client.callTool({ name: 'search_tools', arguments: { query: 'article' } })).isError, 'nor is searching')
  })

  t.test('a stateless (2026-07-28) client: no load_tools (no session), call_tool works', async (t) => {
    const VERSION = '2026-07-28'
    const post = async (id: number, method: string, params: Record<string, unknown>): Promise<{ result: { tools?: Array<{ name: string }>; structuredContent?: unknown } }> => {
      const response = await fetch(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': VERSION, 'mcp-method': method,
          ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
      })
      t.equal(response.status, 200, `${method} answered 200`)
      return await response.json() as { result: { tools?: Array<{ name: string }>; structuredContent?: unknown } }
    }
    t.same((await post(1, 'tools/list', {})).result.tools!.map((tool) => tool.name), ['search_tools', 'describe_tool', 'call_tool'])
    const called = await post(2, 'tools/call', { name: 'call_tool', arguments: { name: 'dns_get_record', arguments: { id: 'example.org' } } })
    t.same(called.result.structuredContent, { tool: 'dns_get_record', args: { id: 'example.org' } })
  })

  t.test('the MCP Inspector CLI lists the meta-tools and calls through call_tool', async (t) => {
    // `mcp-inspector --cli` (its bin) starts the CLI (cli/build/index.js) in a child: the listing goes
    // through the bin as a user types it, the calls straight to the CLI, a process fewer each.
    const bin = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector/cli/build/cli.js', import.meta.url))
    const cli = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector/cli/build/index.js', import.meta.url))
    const run = async (entry: string[], ...args: string[]): Promise<unknown> => {
      const { stdout } = await promisify(execFile)(process.execPath, [...entry, `${gateway.url}/mcp`, '--transport', 'http', ...args], { timeout: 60_000 })
      return JSON.parse(stdout)
    }
    // Each run is a new process (and session): they run at once.
    const [listed, found, called] = await Promise.all([
      run([bin, '--cli'], '--method', 'tools/list') as Promise<{ tools: Array<{ name: string }> }>,
      run([cli], '--method', 'tools/call', '--tool-name', 'search_tools', '--tool-arg', 'query=create a new support ticket') as Promise<ToolResult>,
      run([cli], '--method', 'tools/call', '--tool-name', 'call_tool', '--tool-arg', 'name=wiki_get_page', '--tool-arg', 'arguments={"id":"home"}') as Promise<ToolResult>,
    ])
    t.same(listed.tools.map((tool) => tool.name), ['search_tools', 'describe_tool', 'call_tool', 'load_tools'])
    t.equal(hitNames(found)[0], 'support_create_ticket', 'search through the Inspector')
    t.match(called.structuredContent, { tool: 'wiki_get_page', args: { id: 'home' } })
  })
})
