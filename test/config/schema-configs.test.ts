/**
 * The schema (gateway/config/schema.json, the one editors get through the `yaml-language-server`
 * line) accepts every gateway config the repository ships: config/, deploy/ and the `init`
 * template, loaded as `mcp-edge check` loads them; and the YAML examples of README.md and docs/
 * are checked for the keys and types they show (issue 32: editor completion from the schema).
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import formats from 'ajv-formats'
import { load as parseYaml } from 'js-yaml'
import { Lexer, type Tokens } from 'marked'
import t from 'tap'
import { loadConfig } from '../../gateway/config/load.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const schema = JSON.parse(readFileSync(path.join(ROOT, 'gateway/config/schema.json'), 'utf8')) as Record<string, unknown>

/** Gateway configs in the tree: YAML files with a top-level `routes:` (compose and k8s files are not). */
function shippedConfigs(): string[] {
  const found: string[] = []
  for (const dir of ['config', 'deploy', 'templates/init/config']) {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const file = `${dir}/${name}`
      if (/\.ya?ml$/.test(name) && /^routes:/m.test(readFileSync(path.join(ROOT, file), 'utf8'))) found.push(file)
    }
  }
  return found
}

const configs = shippedConfigs()
t.ok(configs.length >= 5, `the shipped gateway configs are found: ${configs.join(', ')}`)
for (const file of configs) {
  t.test(`${file} loads and validates`, async (t) => {
    // deploy/gateway.yaml's ${REDIS_URL} has no default: compose and the k8s example set it.
    const config = await loadConfig(path.join(ROOT, file), { REDIS_URL: 'redis://127.0.0.1:6379/0' })
    t.ok(config.routes.length > 0)
    t.match(readFileSync(path.join(ROOT, file), 'utf8'), /^# yaml-language-server: \$schema=\S+schema\.json\n/, 'its first line names the schema for editors')
  })
}

/**
 * The schema with no key required: docs show fragments, complete in what they show. A `required`
 * beside `properties` goes, and so do alternatives that only say which key must be present (a route's
 * `handler` or `upstreams`); exclusions (a Redis store's `url` or `sentinels`, not both) stay.
 */
function fragmentSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(fragmentSchema)
  if (!isRecord(node)) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'required' && 'properties' in node) continue
    if ((key === 'anyOf' || key === 'oneOf') && 'properties' in node && Array.isArray(value) && value.every((branch) => isRecord(branch) && Object.keys(branch).every((k) => k === 'required'))) continue
    out[key] = fragmentSchema(value)
  }
  return out
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strict: false })
formats.default(ajv)
ajv.addKeyword({ keyword: 'x-default', schemaType: 'string' })
const validateFragment = ajv.compile(fragmentSchema(schema) as object)
const definitions = schema.definitions as Record<string, { properties: Record<string, unknown> }>
const rootKeys = new Set(Object.keys(schema.properties as object))
const routeKeys = new Set(Object.keys(definitions.route!.properties))
const upstreamKeys = new Set(Object.keys(definitions.upstream!.properties))

/** What an example's `${VAR}` would read: its `:-default`, or a value the docs say the variable holds. */
const EXAMPLE_ENV: Readonly<Record<string, string>> = { REDIS_URL: 'redis://127.0.0.1:6379/0' }
function withEnvironment(node: unknown): unknown {
  if (typeof node === 'string') {
    return node.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (whole, variable: string, fallback: string | undefined) => fallback ?? EXAMPLE_ENV[variable] ?? whole)
  }
  if (Array.isArray(node)) return node.map(withEnvironment)
  if (isRecord(node)) return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withEnvironment(value)]))
  return node
}

/** A YAML example as a whole config: it is one, or a route, an upstream, or a list of routes or of upstreams. */
function asConfig(doc: unknown): Record<string, unknown> | undefined {
  const within = (keys: Set<string>, value: unknown): boolean => isRecord(value) && Object.keys(value).length > 0 && Object.keys(value).every((key) => keys.has(key))
  if (within(rootKeys, doc)) return doc as Record<string, unknown>
  if (within(routeKeys, doc)) return { routes: [doc] }
  if (within(upstreamKeys, doc)) return { routes: [{ upstreams: [doc] }] }
  if (Array.isArray(doc) && doc.length > 0 && doc.every((item) => within(routeKeys, item))) return { routes: doc }
  if (Array.isArray(doc) && doc.length > 0 && doc.every((item) => within(upstreamKeys, item))) return { routes: [{ upstreams: doc }] }
  return undefined
}

const documents = ['README.md', ...readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
let checked = 0
const notConfigs: string[] = []
for (const document of documents) {
  const blocks = Lexer.lex(readFileSync(path.join(ROOT, document), 'utf8')).filter((token): token is Tokens.Code => token.type === 'code' && /^ya?ml$/.test(token.lang ?? ''))
  blocks.forEach((block, index) => {
    const name = `${document}, yaml example ${index + 1}`
    let doc: unknown
    try {
      doc = parseYaml(block.text)
    } catch (error) {
      notConfigs.push(`${name}: not one YAML document (${(error as Error).message.split('\n')[0]})`)
      return
    }
    const config = asConfig(doc)
    if (config === undefined) {
      notConfigs.push(`${name}: not a gateway config`)
      return
    }
    checked++
    t.test(`${name} validates against the schema`, async (t) => {
      const ok = validateFragment(withEnvironment(config))
      t.ok(ok, 'valid', { errors: validateFragment.errors?.map((e) => `${e.instancePath} ${e.message}`), example: block.text })
    })
  })
}
t.ok(checked >= 18, `${checked} YAML examples of the docs are checked`, { skipped: notConfigs })
t.ok(notConfigs.length <= 3, `only a few examples are not checkable: ${notConfigs.join('; ')}`)

t.test('the fragment check still refuses what the gateway would', async (t) => {
  t.notOk(validateFragment({ routes: [{ locaton: '/x' }] }), 'a misspelt key')
  t.notOk(validateFragment({ routes: [{ upstreams: [{ name: 'a', isolation: 'per-user' }] }] }), 'a value outside an enum')
  t.notOk(validateFragment({ store: { type: 'redis', url: 'redis://a', cluster: ['b:1'] } }), 'two Redis topologies at once')
  t.ok(validateFragment({ routes: [{ location: '/x', limits: { rate: [] } }] }), 'while a route may leave out what it does not show')
})
