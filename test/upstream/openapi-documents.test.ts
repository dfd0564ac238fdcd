/**
 * `openapi:` upstreams and real documents: `mcp-edge check` (the CLI, in a child process) lists the
 * tools a published API's document (ReadMe's API v2, OpenAPI 3.1, shipped in @readme/oas-examples)
 * would give, and refuses, each in its own words, a malformed document, a Swagger 2.0 one, operations
 * without operationIds (STAPI's published document), a recursive schema, two operationIds that make
 * one tool name, an operation that is not there, a document URL and an API server that cannot be
 * reached. Then ReadMe's document in front of a Fastify stand-in for its server, called through the
 * official SDK clients of both eras with the upstream's bearer credential.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import t from 'tap'
import { gatewayWith } from '../e2e/harness.ts'
import { freePort } from '../fixtures/waiting.ts'

t.setTimeout(90_000)

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = join(ROOT, 'gateway/bin.mjs')
const EXAMPLES = join(ROOT, 'node_modules/@readme/oas-examples')
const README_API = join(EXAMPLES, '3.1/json/readme.json')

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-openapi-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))

async function check(config: object, ...flags: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(tmp, `config-${Math.random().toString(36).slice(2)}.json`)
  // JSON is YAML: the loader reads it as it reads any config.
  await writeFile(file, JSON.stringify(config))
  const child = spawn(process.execPath, [BIN, 'check', ...flags, '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const [code] = (await once(child, 'close')) as [number | null]
  clearTimeout(timer)
  return { code, stdout, stderr }
}

const route = (location: string, upstream: object): object => ({ location, server: { name: 'openapi-check', version: '1.0.0' }, upstreams: [upstream] })

/** A port on which something listens (the check only connects), closed at teardown. */
async function listening(): Promise<number> {
  const server = createServer((socket) => socket.destroy())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return (server.address() as { port: number }).port
}

const tree = {
  openapi: '3.0.3',
  info: { title: 'Trees', version: '1.0.0' },
  servers: [{ url: 'http://127.0.0.1:1' }],
  paths: {
    '/nodes': {
      post: {
        operationId: 'addNode',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        responses: { 201: { description: 'added', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } },
      },
    },
  },
  components: { schemas: { Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } } },
}

t.test('check: the tools of a published API\'s document, and every kind of problem', async (t) => {
  const live = await listening()
  const closed = await freePort()
  const ok = await check({
    routes: [
      route('/readme', { name: 'readme', openapi: { document: README_API, base_url: `http://127.0.0.1:${live}/v2`, operations: ['*'] } }),
      route('/trees', { name: 'trees', openapi: { document: await json('tree.json', tree), base_url: `http://127.0.0.1:${live}`, operations: ['addNode'], recursion_depth: 2 } }),
    ],
  })
  t.equal(ok.code, 0, `check passes: ${ok.stderr}`)
  t.match(ok.stdout, `route /readme: upstream readme (openapi): 50 tools at http://127.0.0.1:${live}/v2`)
  t.match(ok.stdout, /\n {2}getAPIKeys {2}GET \/projects\/\{subdomain\}\/apikeys\n/, 'each tool with its operation')
  t.match(ok.stdout, /\n {2}deleteBranch {2}DELETE \/branches\/\{branch\}\n/)
  t.match(ok.stdout, /left out: uploadImage \(POST \/images\): its request body is multipart\/form-data/, 'an operation whose body cannot be sent, selected by a pattern: left out, and said so')
  t.match(ok.stdout, /route \/trees: upstream trees \(openapi\): 1 tool/, 'a recursive schema unrolled when recursion_depth allows')

  const bad = await check({
    routes: [
      route('/malformed', { name: 'malformed', openapi: { document: await text('malformed.yaml', 'openapi: 3.0.3\ninfo: { title: x }\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {}\n'), operations: ['*'] } }),
      route('/garbage', { name: 'garbage', openapi: { document: await text('garbage.yaml', '{ this is: [not closed\n'), operations: ['*'] } }),
      route('/swagger', { name: 'swagger', openapi: { document: join(EXAMPLES, '2.0/json/petstore.json'), operations: ['*'] } }),
      route('/startrek', { name: 'startrek', openapi: { document: join(EXAMPLES, '3.0/json/star-trek.json'), paths: ['/animal'] } }),
      route('/recursive', { name: 'recursive', openapi: { document: await json('tree.json', tree), operations: ['addNode'] } }),
      route('/collide', {
        name: 'collide',
        openapi: {
          document: await json('collide.json', {
            openapi: '3.1.0',
            info: { title: 'c', version: '1' },
            servers: [{ url: `http://127.0.0.1:${live}` }],
            paths: { '/a': { get: { operationId: 'get.pet', responses: { 200: { description: 'ok' } } } }, '/b': { get: { operationId: 'get_pet', responses: { 200: { description: 'ok' } } } } },
          }),
          operations: ['get*', 'nowhere'],
        },
      }),
      route('/down', { name: 'down', openapi: { document: join(EXAMPLES, '3.0/json/petstore.json'), base_url: `http://127.0.0.1:${closed}/v2`, tags: ['pet'] } }),
      route('/nodoc', { name: 'nodoc', openapi: { document: `http://127.0.0.1:${closed}/openapi.json?token=secret-in-query`, operations: ['*'] } }),
    ],
  })
  t.equal(bad.code, 2, 'check fails')
  const lines = bad.stderr
  t.match(lines, /route \/malformed: upstream malformed \(openapi\): the document \S+malformed\.yaml is not valid OpenAPI: .*info must have required property 'version'/, 'a malformed document')
  t.match(lines, /route \/garbage: upstream garbage \(openapi\): the document \S+garbage\.yaml is neither JSON nor YAML/, 'an unparsable one')
  t.match(lines, /route \/swagger: upstream swagger \(openapi\): the document \S+ is Swagger 2\.0: only OpenAPI 3\.0 and 3\.1 are supported/, 'Swagger 2.0')
  t.match(lines, /route \/startrek: upstream startrek \(openapi\): GET \/animal has no operationId: give it one in the document/, 'a missing operationId')
  t.match(lines, /route \/recursive: upstream recursive \(openapi\): operation "addNode" \(POST \/nodes\): POST \/nodes request body: recursive schema \(Node → Node\); set openapi\.recursion_depth/, 'a recursive schema')
  t.match(lines, /route \/collide: upstream collide \(openapi\): operationId "get_pet" \(GET \/b\) becomes the tool name get_pet, as "get\.pet" \(GET \/a\) does/, 'a collision of tool names')
  t.match(lines, /route \/collide: upstream collide \(openapi\): operations\[1\]: the document has no operation "nowhere"/, 'an operation not in the document')
  t.match(lines, new RegExp(`route /down: upstream down \\(openapi\\): the API at http://127\\.0\\.0\\.1:${closed} cannot be reached \\(ECONNREFUSED\\)`), 'an unreachable API server')
  t.match(lines, new RegExp(`route /nodoc: upstream nodoc \\(openapi\\): cannot fetch the document http://127\\.0\\.0\\.1:${closed}/openapi\\.json: ECONNREFUSED`), 'an unreachable document URL')
  t.notMatch(lines, /secret-in-query/, 'a document URL\'s query is never printed')
  t.notMatch(lines, /handler setup failed/, 'each problem once, in its own words')

  const offline = await check({ routes: [route('/down', { name: 'down', openapi: { document: join(EXAMPLES, '3.0/json/petstore.json'), base_url: `http://127.0.0.1:${closed}/v2`, tags: ['pet'] } })] }, '--offline')
  t.equal(offline.code, 0, `--offline (what a reload runs) does not reach the API: ${offline.stderr}`)
  t.match(offline.stdout, /route \/down: upstream down \(openapi\): 7 tools at .*\n  updatePet  PUT \/pet\n/, 'the Petstore\'s pet operations (the tag)')
})

t.test('ReadMe\'s published document in front of a stand-in for its server, both eras', async (t) => {
  const seen: string[] = []
  const app = Fastify()
  app.addHook('onRequest', async (request, reply) => {
    seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? '-'}`)
    if (request.headers.authorization !== 'Bearer rdme_gateway_token') return reply.code(401).send({ error: 'unauthorized' })
  })
  const key = (label: string) => ({ token: 'rdme_abc123', label, last_accessed_on: '2026-01-01T00:00:00Z', created_at: '2025-12-01T00:00:00Z', uri: '/projects/docs/apikeys/0123456789abcdef01234567' })
  app.get('/v2/projects/:subdomain/apikeys/:id', async (request, reply) => {
    const { id } = request.params as { id: string }
    if (id !== '0123456789abcdef01234567') return reply.code(404).send({ status: 404, title: 'API key not found', detail: `no key ${id}` })
    return { data: key('ci') }
  })
  app.post('/v2/projects/:subdomain/apikeys', async (request, reply) => reply.code(201).send({ data: key((request.body as { label: string }).label) }))
  app.delete('/v2/projects/:subdomain/apikeys/:id', async (_request, reply) => reply.code(204).send())
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

  const gateway = await gatewayWith(t, [{
    location: '/readme',
    server: { name: 'readme-gateway', version: '1.0.0' },
    upstreams: [{ name: 'readme', auth: { headers: { authorization: 'Bearer rdme_gateway_token' } }, openapi: { document: README_API, base_url: `${origin}/v2`, operations: ['*APIKey'] } }],
    prefix: 'always',
  }])

  const client = new Client({ name: 'sdk-1x', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/readme`), { requestInit: { headers: { authorization: 'Bearer caller-own-token' } } }))
  t.teardown(() => client.close())
  const tools = (await client.listTools()).tools
  t.same(tools.map((tool) => tool.name).sort(), ['readme__createAPIKey', 'readme__deleteAPIKey', 'readme__getAPIKey', 'readme__updateAPIKey'], 'the operations the glob selects')
  const getKey = tools.find((tool) => tool.name === 'readme__getAPIKey')!
  t.match(getKey, { title: 'Get an API key', description: /^Get an API key\n\nGet an API key for your ReadMe project\./, inputSchema: { required: ['api_key_id', 'subdomain'] }, outputSchema: { required: ['data'] }, annotations: { readOnlyHint: true } }, 'a tool as the model sees it')

  const found = await client.callTool({ name: 'readme__getAPIKey', arguments: { subdomain: 'docs', api_key_id: '0123456789abcdef01234567' } })
  t.match(found.structuredContent, { data: { label: 'ci', token: 'rdme_abc123' } }, 'structuredContent that the SDK client checked against the outputSchema')
  const missing = await client.callTool({ name: 'readme__getAPIKey', arguments: { subdomain: 'docs', api_key_id: 'ffffffffffffffffffffffff' } }) as { isError?: boolean; content: Array<{ text: string }> }
  t.equal(missing.isError, true)
  t.match(missing.content[0]!.text, /HTTP 404 from getAPIKey\n.*API key not found/)
  const created = await client.callTool({ name: 'readme__createAPIKey', arguments: { subdomain: 'docs', body: { label: 'new key' } } })
  t.match(created.structuredContent, { data: { label: 'new key' } }, 'a JSON body')
  const invalid = await client.callTool({ name: 'readme__getAPIKey', arguments: { subdomain: 'docs', api_key_id: 'x' } }) as { isError?: boolean; content: Array<{ text: string }> }
  t.match(invalid, { isError: true, content: [{ text: /invalid arguments: \/api_key_id must match pattern/ }] }, 'the document\'s own constraints checked before the request')

  const v2 = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
  await v2.connect(new TransportV2(new URL(`${gateway.url}/readme`)))
  t.teardown(() => v2.close())
  t.equal(v2.getProtocolEra(), 'modern')
  t.equal((await v2.listTools()).tools.length, 4)
  const removed = await v2.callTool({ name: 'readme__deleteAPIKey', arguments: { subdomain: 'docs', api_key_id: '0123456789abcdef01234567' } }) as { isError?: boolean; content: Array<{ text: string }> }
  t.notOk(removed.isError, 'a stateless call')
  t.match(removed.content[0]!.text, /HTTP 204/)

  t.equal(seen.length, 4, 'the stand-in was called once per call that passed the gateway\'s own checks')
  t.ok(seen.every((line) => line.endsWith('Bearer rdme_gateway_token')), 'every call carried the upstream\'s credential, never the caller\'s')
  t.ok(seen.every((line) => line.split(' ')[1]!.startsWith('/v2/projects/docs/apikeys')), 'under the base URL\'s path')
})

async function json(name: string, value: object): Promise<string> {
  return text(name, JSON.stringify(value))
}

async function text(name: string, content: string): Promise<string> {
  const file = join(tmp, name)
  await writeFile(file, content)
  return file
}
