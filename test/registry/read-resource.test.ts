import t from 'tap'
import { McpError, RpcCode } from '../../gateway/wire/errors.ts'
import { mcp } from '../../gateway/registry/components.ts'
import { readResource } from '../../gateway/registry/read-resource.ts'
import { Registry } from '../../gateway/registry/registry.ts'
import { fakeContext } from './fake-context.ts'

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47])

function fixture(): Registry {
  const registry = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  registry.register(
    mcp.resource('test://static-text', 'text', () => 'This is the content of the static text resource.', { mimeType: 'text/plain' }),
    mcp.resource('test://static-binary', 'binary', () => PNG, { mimeType: 'image/png' }),
    mcp.resource('test://buffer', 'buffer', () => Buffer.from('hello').subarray(1)),
    mcp.resource('test://list', 'list', () => [
      { text: 'first' },
      { uri: 'test://list/2', blob: 'AAAA', mimeType: 'application/octet-stream' },
      { uri: 'test://list/3', text: 'third' },
    ], { mimeType: 'text/markdown' }),
    mcp.resource('test://gone', 'gone', () => undefined),
    mcp.resource('test://bad', 'bad', () => [{ uri: 'test://bad' }] as never),
    mcp.resourceTemplate(
      'test://template/{id}/data',
      'template',
      (_uri, vars) => JSON.stringify({ id: vars.id, templateTest: true, data: `Data for ID: ${String(vars.id)}` }),
      { mimeType: 'application/json' },
    ),
    mcp.resourceTemplate('test://maybe/{id}', 'maybe', (_uri, vars) => (vars.id === 'known' ? 'here' : null)),
  )
  return registry
}

const read = (registry: Registry, uri: string, hidden?: ReadonlySet<string>) => readResource(registry, uri, fakeContext(), hidden)
const notFound = (uri: string) => ({ code: RpcCode.ResourceNotFound, message: 'Resource not found', data: { uri } })

t.test('return-value shortcuts, with uri and mimeType filled in', async (t) => {
  const registry = fixture()
  t.same(await read(registry, 'test://static-text'), {
    contents: [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }, 'string → text')
  t.same(await read(registry, 'test://static-binary'), {
    contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: Buffer.from(PNG).toString('base64') }],
  }, 'bytes → base64 blob')
  t.same(await read(registry, 'test://buffer'), { contents: [{ uri: 'test://buffer', blob: Buffer.from('ello').toString('base64') }] },
    'a Buffer view encodes only its own bytes; no mimeType key without one')
  t.same(await read(registry, 'test://list'), {
    contents: [
      { uri: 'test://list', mimeType: 'text/markdown', text: 'first' },
      { uri: 'test://list/2', blob: 'AAAA', mimeType: 'application/octet-stream' },
      { uri: 'test://list/3', mimeType: 'text/markdown', text: 'third' },
    ],
  }, 'array → each item, gaps filled from the component')
  await t.rejects(read(registry, 'test://bad'), /contents\[0\] needs a string "text" or a base64 "blob"/)
  const odd = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  odd.register(mcp.resource('test://n', 'n', () => 5 as never))
  await t.rejects(read(odd, 'test://n'), /returned number, not a string, bytes or a list of contents/)
})

t.test('templates match exactly and pass their variables', async (t) => {
  const registry = fixture()
  const result = await read(registry, 'test://template/123/data')
  t.equal(result.contents[0]?.uri, 'test://template/123/data')
  t.equal(result.contents[0]?.mimeType, 'application/json')
  t.same(JSON.parse((result.contents[0] as { text: string }).text), { id: '123', templateTest: true, data: 'Data for ID: 123' })
  await t.rejects(read(registry, 'test://template/123/other'), notFound('test://template/123/other'))
  await t.rejects(read(registry, 'test://template/1/2/data'), notFound('test://template/1/2/data'))
  t.same(await read(registry, 'test://maybe/known'), { contents: [{ uri: 'test://maybe/known', text: 'here' }] })
})

t.test('not found is -32002 with the uri, distinct from a failing callback', async (t) => {
  const registry = fixture()
  const uri = 'test://nonexistent-resource-for-conformance-testing'
  await t.rejects(read(registry, uri), notFound(uri))
  const error = await read(registry, uri).catch((err: unknown) => err)
  t.ok(error instanceof McpError)
  await t.rejects(read(registry, 'test://gone'), notFound('test://gone'), 'a static callback returning undefined')
  await t.rejects(read(registry, 'test://maybe/unknown'), notFound('test://maybe/unknown'), 'a template callback returning null')
  await t.rejects(read(registry, 'test://static-text', new Set(['resource:test://static-text'])), notFound('test://static-text'), 'hidden')
  const failing = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  failing.register(mcp.resource('test://boom', 'boom', () => {
    throw new Error('disk on fire')
  }))
  await t.rejects(read(failing, 'test://boom'), new Error('disk on fire'))
  await t.rejects(readResource(failing, 7 as never, fakeContext()), { code: RpcCode.InvalidParams })
})
