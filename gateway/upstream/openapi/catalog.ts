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
  /** Where calls go: its origin is the only one requests and redirects may reach. */
  readonly base: URL
  /** Operations a pattern selected but that cannot be served (their body's media type), with why. */
  readonly skipped: readonly string[]
  /** The tool's argument and output validators, compiled at its first call (ajv takes ~10-30 ms a schema). */
  validators(name: string): Validators
  /** Compiles every tool's schemas now (`check`); the problems of those that do not compile. */
  compileAll(): string[]
}

/** A tool's compiled schemas; `output` only for a tool with an outputSchema. */
export interface Validators {
  readonly input: ValidateFunction
  readonly output: ValidateFunction | undefined
}

class Catalog implements OpenApiCatalog {
  readonly listed: readonly JsonObject[]
  readonly byName: ReadonlyMap<string, OperationTool>
  readonly base: URL
  readonly skipped: readonly string[]
  readonly #validators = new Map<string, Validators>()

  constructor(tools: readonly OperationTool[], base: URL, skipped: readonly string[]) {
    this.listed = tools.map((tool) => tool.tool)
    this.byName = new Map(tools.map((tool) => [tool.name, tool]))
    this.base = base
    this.skipped = skipped
  }

  validators(name: string): Validators {
    let validators = this.#validators.get(name)
    if (validators === undefined) {
      const tool = this.byName.get(name)!.tool
      validators = {
        input: compileObjectSchema(tool.inputSchema),
        output: tool.outputSchema === undefined ? undefined : compileObjectSchema(tool.outputSchema),
      }
      this.#validators.set(name, validators)
    }
    return validators
  }

  compileAll(): string[] {
    const problems: string[] = []
    for (const [name, tool] of this.byName) {
      try {
        this.validators(name)
      } catch (error) {
        problems.push(`operation ${JSON.stringify(tool.operationId)}: its schemas ${(error as Error).message}`)
      }
    }
    return problems
  }
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
  const { tools, problems: operationProblems, skipped } = selectOperations(document, config)
  problems.push(...operationProblems)
  if (tools.length === 0 && problems.length === 0) problems.push('no operation is selected: list operationIds (or globs) in openapi.operations, or use tags or paths')
  if (problems.length > 0 || base === undefined) return { problems }
  return { catalog: new Catalog(tools, base, skipped) }
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
