/**
 * The pure parts of `openapi:` upstreams: parameter serialisation per OpenAPI's style/explode table
 * (path simple/label/matrix, query form/spaceDelimited/pipeDelimited/deepObject, headers, cookies,
 * form bodies), and schema conversion (3.0 keywords, recursion refused or unrolled, size bounds).
 */
import t from 'tap'
import { ArgumentProblem, buildRequest } from '../../gateway/upstream/openapi/build-request.ts'
import type { OperationTool, ParameterSpec } from '../../gateway/upstream/openapi/operations.ts'
import { SchemaConverter, SchemaProblem } from '../../gateway/upstream/openapi/schema-convert.ts'

const parameter = (name: string, where: ParameterSpec['in'], style: string, explode: boolean): ParameterSpec =>
  ({ name, argument: name, in: where, style, explode, required: false, allowReserved: false, json: false })

const operation = (path: string, parameters: ParameterSpec[], body?: OperationTool['body']): OperationTool =>
  ({ name: 'op', operationId: 'op', method: 'GET', path, parameters, body, tool: {} })

t.test('path styles (OpenAPI 3 style examples: color = blue, [blue,black,brown], {R:100,G:200,B:150})', async (t) => {
  const list = ['blue', 'black', 'brown']
  const object = { R: 100, G: 200, B: 150 }
  const cases: Array<[string, boolean, unknown, string]> = [
    ['simple', false, 'blue', '/c/blue'],
    ['simple', false, list, '/c/blue,black,brown'],
    ['simple', false, object, '/c/R,100,G,200,B,150'],
    ['simple', true, object, '/c/R=100,G=200,B=150'],
    ['label', false, list, '/c/.blue,black,brown'],
    ['label', true, list, '/c/.blue.black.brown'],
    ['matrix', false, 'blue', '/c/;color=blue'],
    ['matrix', true, list, '/c/;color=blue;color=black;color=brown'],
    ['matrix', true, object, '/c/;R=100;G=200;B=150'],
  ]
  for (const [style, explode, value, expected] of cases) {
    t.equal(buildRequest(operation('/c/{color}', [parameter('color', 'path', style, explode)]), { color: value }).pathAndQuery, expected, `${style}${explode ? '*' : ''} ${JSON.stringify(value)}`)
  }
  t.equal(buildRequest(operation('/f/{name}.json', [parameter('name', 'path', 'simple', false)]), { name: '..' }).pathAndQuery, '/f/...json', 'dots inside a segment are no dot segment')
  t.throws(() => buildRequest(operation('/f/{name}', [parameter('name', 'path', 'simple', false)]), { name: '.' }), ArgumentProblem)
  t.equal(buildRequest(operation('/f/{name}', [parameter('name', 'path', 'simple', false)]), { name: 'é ?#' }).pathAndQuery, '/f/%C3%A9%20%3F%23', 'reserved and non-ASCII characters encoded')
})

t.test('query, header and cookie styles', async (t) => {
  const list = ['blue', 'black']
  const object = { R: 100, G: 200 }
  const query = (style: string, explode: boolean, value: unknown): string =>
    buildRequest(operation('/q', [parameter('color', 'query', style, explode)]), { color: value }).pathAndQuery
  t.equal(query('form', true, list), '/q?color=blue&color=black')
  t.equal(query('form', false, list), '/q?color=blue,black')
  t.equal(query('form', true, object), '/q?R=100&G=200')
  t.equal(query('form', false, object), '/q?color=R,100,G,200')
  t.equal(query('spaceDelimited', false, list), '/q?color=blue%20black')
  t.equal(query('pipeDelimited', false, list), '/q?color=blue%7Cblack')
  t.equal(query('deepObject', true, object), '/q?color%5BR%5D=100&color%5BG%5D=200')
  const built = buildRequest(operation('/h', [parameter('X-Colors', 'header', 'simple', false), parameter('session', 'cookie', 'form', true), parameter('Host', 'header', 'simple', false)]), { 'X-Colors': list, session: 'a b', Host: 'evil.example' })
  t.same(built.headers, { 'x-colors': 'blue,black', cookie: 'session=a%20b' }, 'a header parameter cannot set Host (nor Authorization, Cookie, Content-Type)')
  const missing = { ...parameter('id', 'query', 'form', true), required: true }
  t.throws(() => buildRequest(operation('/q', [missing]), {}), /missing required argument "id"/)
})

t.test('bodies', async (t) => {
  const json = buildRequest(operation('/b', [], { mediaType: 'application/json', required: true }), { body: { a: [1, 2] } })
  t.same([json.body, json.headers['content-type']], ['{"a":[1,2]}', 'application/json'])
  const form = buildRequest(operation('/b', [], { mediaType: 'application/x-www-form-urlencoded', required: false }), { body: { name: 'a b', tags: ['x', 'y'] } })
  t.equal(form.body, 'name=a+b&tags=x&tags=y')
  t.throws(() => buildRequest(operation('/b', [], { mediaType: 'application/json', required: true }), {}), /missing required argument "body"/)
})

t.test('schema conversion', async (t) => {
  const document = {
    openapi: '3.0.3',
    components: {
      schemas: {
        Pet: { type: 'object', nullable: true, discriminator: { propertyName: 'kind' }, 'x-internal': 1, example: { kind: 'dog' }, properties: { age: { type: 'integer', minimum: 0, exclusiveMinimum: true }, kind: { type: 'string', enum: ['dog', 'cat'], nullable: true } } },
        Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } },
        A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } },
        B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' } } },
        Wide: { type: 'object', properties: Object.fromEntries(Array.from({ length: 30 }, (_v, i) => [`p${i}`, { $ref: '#/components/schemas/Wider' }])) },
        Wider: { type: 'object', properties: Object.fromEntries(Array.from({ length: 30 }, (_v, i) => [`q${i}`, { $ref: '#/components/schemas/Widest' }])) },
        Widest: { type: 'object', properties: Object.fromEntries(Array.from({ length: 30 }, (_v, i) => [`r${i}`, { type: 'string' }])) },
      },
    },
  }
  const strict = new SchemaConverter(document, 0)
  t.same(strict.convert({ $ref: '#/components/schemas/Pet' }, 'pet'), {
    type: ['object', 'null'],
    examples: [{ kind: 'dog' }],
    properties: { age: { type: 'integer', exclusiveMinimum: 0 }, kind: { type: ['string', 'null'], enum: ['dog', 'cat', null] } },
  }, '3.0: nullable, boolean exclusiveMinimum, example; discriminator and x- dropped')
  t.throws(() => strict.convert({ $ref: '#/components/schemas/Node' }, 'node'), new SchemaProblem('node: recursive schema (Node → Node); set openapi.recursion_depth to unroll it a few levels, or leave this operation out'))
  t.throws(() => strict.convert({ $ref: '#/components/schemas/A' }, 'ab'), /recursive schema \(A → B → A\)/, 'through another schema too')
  t.throws(() => strict.convert({ $ref: '#/components/schemas/Missing' }, 'm'), /points at nothing/)
  t.throws(() => strict.convert({ $ref: 'other.yaml#/Pet' }, 'x'), /points outside the document/)
  t.throws(() => strict.convert({ $ref: '#/components/schemas/Wide' }, 'wide'), /larger than 20000 nodes/, 'a schema that explodes once inlined is refused')
  const unrolled = new SchemaConverter(document, 1).convert({ $ref: '#/components/schemas/Node' }, 'node')
  t.same(unrolled, { type: 'object', properties: { children: { type: 'array', items: { type: 'object', properties: { children: { type: 'array', items: { description: '(Node: recursive, cut here)' } } } } } } }, 'recursion_depth 1: unrolled once, then cut')
})
