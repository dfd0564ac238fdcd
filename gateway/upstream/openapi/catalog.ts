/**
 * An `openapi:` upstream's tools, built once per document load (at start, on reload, by `check`):
 * the document loaded and validated, the selected operations as tools, the base URL every call goes
 * to. Loads are kept per config object, so `check` and the endpoint it builds share one.
 *
 *   UpstreamConfig ─► loadCatalog (once per config object) ─► { tools, byName, base } | problems
 */
import { connect } from 'node:net'
import type { OpenApiUpstreamConfig, RouteConfig, UpstreamConfig } from '../../config/types.ts'
import { EdgeError } from '../../wire/errors.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import { compileObjectSchema, type ValidateFunction } from '../../registry/json-schema.ts'
import { DocumentProblem, loadDocument, safeUrl } from './load-document.ts'
import { selectOperations, type OperationTool } from './operations.ts'
import { isObject } from './schema-convert.ts'

/** What one load made of an upstream's document. */
export interface OpenApiCatalog {
  /** The tools/list items, in document order (the same objects on every list). */
  readonly listed: readonly JsonObject[]
  readonly byName: ReadonlyMap<string, OperationTool>
  /** Each tool's argument validator, compiled once. */
  readonly inputs: ReadonlyMap<string, ValidateFunction>
  /** Each tool's output validator (tools with an outputSchema), compiled once. */
  readonly outputs: ReadonlyMap<string, ValidateFunction>
  /** Where calls go: its origin is the only one requests and redirects may reach. */
  readonly base: URL
}

/** A load's outcome: the catalog, or every problem found. */
export type CatalogOutcome = { catalog: OpenApiCatalog } | { problems: string[] }

const loads = new WeakMap<OpenApiUpstreamConfig, Promise<CatalogOutcome>>()
const settled = new WeakMap<OpenApiUpstreamConfig, OpenApiCatalog>()

/** The catalog of `config`, loaded once per config object (a reload's config is a new one). */
export function loadCatalog(config: OpenApiUpstreamConfig): Promise<CatalogOutcome> {
  let load = loads.get(config)
  if (load === undefined) {
    load = build(config).then((outcome) => {
      if ('catalog' in outcome) settled.set(config, outcome.catalog)
      return outcome
    })
    loads.set(config, load)
  }
  return load
}

/**
 * Loads every openapi upstream of `route`; throws MCP_EDGE_CONFIG_INVALID naming each problem, so
 * the route does not start with a document it cannot serve.
 */
export async function prepareOpenApi(route: RouteConfig): Promise<void> {
  const problems: string[] = []
  for (const upstream of route.upstreams) {
    if (upstream.openapi === undefined) continue
    const outcome = await loadCatalog(upstream.openapi)
    if ('problems' in outcome) problems.push(...outcome.problems.map((problem) => `upstream ${upstream.name}: ${problem}`))
  }
  if (problems.length > 0) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', problems.join('\n'))
}

/** The catalog `prepareOpenApi` loaded for `upstream`; throws when it was not loaded first. */
export function loadedCatalog(upstream: UpstreamConfig): OpenApiCatalog {
  const catalog = upstream.openapi === undefined ? undefined : settled.get(upstream.openapi)
  if (catalog === undefined) throw new Error(`upstream ${upstream.name}: its OpenAPI document was not loaded`)
  return catalog
}

async function build(config: OpenApiUpstreamConfig): Promise<CatalogOutcome> {
  let document: JsonObject
  try {
    document = await loadDocument(config)
  } catch (error) {
    if (error instanceof DocumentProblem) return { problems: [error.message] }
    throw error
  }
  const problems: string[] = []
  const base = baseUrl(document, config, problems)
  const { tools, problems: operationProblems } = selectOperations(document, config)
  problems.push(...operationProblems)
  if (tools.length === 0 && problems.length === 0) problems.push('no operation is selected: list operationIds (or globs) in openapi.operations, or use tags or paths')
  const inputs = new Map<string, ValidateFunction>()
  const outputs = new Map<string, ValidateFunction>()
  for (const tool of tools) {
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      if (tool.tool[key] === undefined) continue
      try {
        const validate = compileObjectSchema(tool.tool[key])
        ;(key === 'outputSchema' ? outputs : inputs).set(tool.name, validate)
      } catch (error) {
        problems.push(`operation ${JSON.stringify(tool.operationId)}: its ${key === 'inputSchema' ? 'parameters and body' : 'response'} schema ${(error as Error).message}`)
      }
    }
  }
  if (problems.length > 0 || base === undefined) return { problems }
  return { catalog: { listed: tools.map((tool) => tool.tool), byName: new Map(tools.map((tool) => [tool.name, tool])), inputs, outputs, base } }
}

/** `base_url`, or the document's first server with its variables at their defaults. */
function baseUrl(document: JsonObject, config: OpenApiUpstreamConfig, problems: string[]): URL | undefined {
  let raw = config.base_url
  if (raw === undefined) {
    const server = Array.isArray(document.servers) ? document.servers[0] : undefined
    if (!isObject(server) || typeof server.url !== 'string') {
      problems.push('the document names no server: set openapi.base_url')
      return undefined
    }
    raw = server.url.replace(/\{([^}]+)\}/g, (_match, name: string) => {
      const variable = isObject(server.variables) ? server.variables[name] : undefined
      return isObject(variable) && typeof variable.default === 'string' ? variable.default : `{${name}}`
    })
    if (/^https?:\/\//i.test(config.document)) raw = new URL(raw, config.document).href
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    problems.push(`the base URL ${JSON.stringify(raw)} is not an absolute URL: set openapi.base_url`)
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`the base URL ${safeUrl(url.href)} is not http or https: set openapi.base_url`)
    return undefined
  }
  if (url.search !== '' || url.hash !== '') problems.push('the base URL cannot have a query or a fragment')
  return url
}

/**
 * Whether the API's host takes a TCP connection within `timeoutMs` (for `check`): undefined when it
 * does, else why not (ECONNREFUSED, ENOTFOUND, a timeout). Any HTTP answer is not needed: a REST API
 * has no ping, and its root may well answer 404.
 */
export function unreachable(base: URL, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const port = Number(base.port || (base.protocol === 'https:' ? 443 : 80))
    const socket = connect({ host: base.hostname.replace(/^\[|\]$/g, ''), port })
    const done = (why: string | undefined): void => {
      socket.destroy()
      resolve(why)
    }
    socket.setTimeout(timeoutMs, () => done(`no connection within ${timeoutMs} ms`))
    socket.once('connect', () => done(undefined))
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'connection failed'))
  })
}
