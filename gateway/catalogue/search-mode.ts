/**
 * Tool search (`catalogue: search`): tools/list answers a few meta-tools (meta-tools.ts) instead of
 * the route's whole list, and the route's own tools/list and tools/call stay underneath, unchanged.
 *
 *   tools/list ───────────────► meta-tools (+ the tools this session loaded)
 *   search_tools {query} ─────► the caller's own list (every page, as tools/list would give it, filter phase included)
 *                                 └► index of that list (search-index.ts) ─► best hits
 *   describe_tool {name} ─────► that tool's descriptor from the same list
 *   call_tool {name, arguments} ─► rewritten at the door (directCall) into tools/call {name, arguments}:
 *                                 call record, filter, scopes, limits and the route's own tools/call see
 *                                 a direct call of the tool; its arguments are checked against its schema
 *   load_tools {names} ───────► the session's catalogue document (search-loaded.ts) ─► list_changed
 *
 * A tool the caller may not list (scopes, hidden) is in no index they search and describe_tool does
 * not know it; calling it is refused exactly as a direct call is.
 */
import type { SearchConfig } from '../config/types.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { MethodHandler, MethodHost } from '../protocol/methods/index.ts'
import { checkScopes } from '../protocol/methods/params.ts'
import type { RequestContext } from '../registry/context.ts'
import { describeErrors } from '../registry/json-schema.ts'
import type { SessionRecord } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'
import type { JsonRpcRequest } from '../wire/jsonrpc.ts'
import { resultMessage } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { CALL_TOOL, DESCRIBE_TOOL, describeResult, hitsResult, LOAD_TOOLS, META_TOOLS, metaDescriptors, metaError, SEARCH_TOOLS } from './meta-tools.ts'
import { loadedTools, loadTools } from './search-loaded.ts'
import { SearchIndexes, type SearchIndex } from './search-index.ts'

/** Pages of the route's own tools/list read for one index, and tools kept: a list past them is searched in part. */
const MAX_PAGES = 200
const MAX_TOOLS = 10_000

/** The params of tools/call requests that came in as call_tool: their arguments are checked against the tool's schema. */
const viaCallTool = new WeakSet<JsonObject>()

/**
 * `request` as the direct call a call_tool request stands for: `tools/call {name: call_tool,
 * arguments: {name: X, arguments: A}}` becomes `tools/call {name: X, arguments: A}` (the rest of its
 * params, `_meta` and `task`, kept). Anything else is returned as it is.
 */
export function directCall(request: JsonRpcRequest): JsonRpcRequest {
  if (request.method !== 'tools/call') return request
  const params = request.params
  if (params?.name !== CALL_TOOL) return request
  const args = params.arguments as JsonObject | undefined
  if (args === null || typeof args !== 'object' || Array.isArray(args) || typeof args.name !== 'string' || args.name === CALL_TOOL) return request
  const direct: JsonObject = { ...params, name: args.name, arguments: args.arguments ?? {} }
  viaCallTool.add(direct)
  return { ...request, params: direct }
}

/** Puts `endpoint` in search mode (after a proxy route's or virtual route's methods are in place). */
export function attachSearch(endpoint: McpEndpoint): void {
  const list = endpoint.method('tools/list')
  const call = endpoint.method('tools/call')
  if (list === undefined || call === undefined) return
  const search = new ToolSearch(endpoint, endpoint.route.search, list, call)
  endpoint.wrapMethod('tools/list', () => search.list)
  endpoint.wrapMethod('tools/call', () => search.call)
  endpoint.translate = directCall
}

class ToolSearch {
  readonly #endpoint: McpEndpoint
  readonly #config: SearchConfig
  readonly #list: MethodHandler
  readonly #call: MethodHandler
  readonly #indexes: SearchIndexes
  readonly #meta: { all: JsonObject[]; withoutLoad: JsonObject[] }

  constructor(endpoint: McpEndpoint, config: SearchConfig, list: MethodHandler, call: MethodHandler) {
    this.#endpoint = endpoint
    this.#config = config
    this.#list = list
    this.#call = call
    this.#indexes = new SearchIndexes(config.indexes)
    this.#meta = metaDescriptors(config.max_results, config.max_loaded)
  }

  /** tools/list: the meta-tools the caller may use, then the tools the session loaded. */
  readonly list: MethodHandler = (host, record, params, ctx) => {
    const meta = (record.id === '' ? this.#meta.withoutLoad : this.#meta.all).filter((tool) => host.scopes?.missing('tool', String(tool.name), ctx.caller.scopes) === undefined)
    if (record.catalogue === undefined || this.#config.max_loaded === 0) return { tools: meta }
    return this.#withLoaded(host, record, params, ctx, meta)
  }

  /** tools/call: a meta-tool here; any other name is the route's own call (checked first when it came as call_tool). */
  readonly call: MethodHandler = (host, record, params, ctx) => {
    const name = params.name
    if (typeof name === 'string' && META_TOOLS.has(name) && (name !== LOAD_TOOLS || this.#config.max_loaded > 0)) {
      checkScopes(host, ctx.caller, 'tool', name)
      const args = (params.arguments ?? {}) as JsonObject
      if (args === null || typeof args !== 'object' || Array.isArray(args)) return metaError(`${name} takes an object of arguments`)
      switch (name) {
        case SEARCH_TOOLS:
          return this.#search(host, record, params, ctx, args)
        case DESCRIBE_TOOL:
          return this.#describe(host, record, params, ctx, args)
        case LOAD_TOOLS:
          return this.#load(host, record, params, ctx, args)
        default:
          return metaError('call_tool needs {name: a tool name from search_tools, arguments: an object}; it cannot call itself')
      }
    }
    if (viaCallTool.has(params) && typeof name === 'string' && host.viewOf(record).tool(name) === undefined) return this.#checkedCall(host, record, params, ctx, name)
    return this.#call(host, record, params, ctx)
  }

  async #search(host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, args: JsonObject): Promise<JsonObject> {
    const query = args.query
    if (typeof query !== 'string' || query.trim() === '') return metaError('search_tools needs a query: a few words saying what the tool should do')
    if (query.length > this.#config.max_query) return metaError(`the query is ${query.length} characters; at most ${this.#config.max_query} are taken (search.max_query)`)
    const asked = args.limit
    if (asked !== undefined && (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1)) return metaError('limit must be a whole number of at least 1')
    const limit = Math.min(asked ?? this.#config.results, this.#config.max_results)
    const index = await this.#indexOf(host, record, params, ctx)
    return hitsResult(query, index.search(query, limit), index.size)
  }

  async #describe(host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, args: JsonObject): Promise<JsonObject> {
    if (typeof args.name !== 'string') return metaError('describe_tool needs the name of a tool search_tools returned')
    const tool = (await this.#indexOf(host, record, params, ctx)).tools.get(args.name)
    if (tool === undefined) return metaError(`No tool named "${args.name}" is offered to you here; find one with search_tools`)
    return describeResult(tool)
  }

  async #load(host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, args: JsonObject): Promise<JsonObject> {
    if (record.id === '') return metaError('load_tools needs a session (MCP 2025-11-25 or earlier); call tools with call_tool instead')
    const names = args.names
    if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === 'string')) return metaError('load_tools needs names: a list of tool names search_tools returned')
    const index = await this.#indexOf(host, record, params, ctx)
    const unknown = names.filter((name) => !index.tools.has(name) || META_TOOLS.has(name))
    if (unknown.length > 0) return metaError(`Not offered to you here: ${unknown.join(', ')}; find tools with search_tools`)
    let loaded: string[]
    try {
      loaded = await loadTools(this.#endpoint.store, record.id, names as string[], this.#config.max_loaded, this.#endpoint.route.limits.session_catalogue)
    } catch (error) {
      if (error instanceof EdgeError && error.code === 'MCP_EDGE_SESSION_DATA_TOO_LARGE') return metaError(error.message)
      throw error
    }
    this.#endpoint.sessionListChanged(record.id, 'tools')
    return { content: [{ type: 'text', text: `Loaded: ${(names as string[]).join(', ')}. This session's tool list now has ${loaded.length} loaded tools; call them directly.` }] }
  }

  async #checkedCall(host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, name: string): Promise<JsonObject> {
    const validate = (await this.#indexOf(host, record, params, ctx)).validator(name)
    // A tool not in the caller's list, or whose schema does not compile, is the route's own call to refuse or make.
    if (typeof validate === 'function' && !validate(params.arguments ?? {})) {
      return metaError(`Invalid arguments for ${name}: ${describeErrors(validate.errors)}. describe_tool {name: "${name}"} shows its input schema.`)
    }
    return this.#call(host, record, params, ctx)
  }

  async #withLoaded(host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, meta: JsonObject[]): Promise<JsonObject> {
    const names = await loadedTools(this.#endpoint.store, record)
    if (names.length === 0) return { tools: meta }
    const index = await this.#indexOf(host, record, params, ctx)
    const loaded = names.flatMap((name) => (META_TOOLS.has(name) ? [] : [index.tools.get(name)].filter((tool) => tool !== undefined)))
    return { tools: [...meta, ...loaded] }
  }

  /** The index of the list this caller sees now: the route's own tools/list, every page, through the filter phase. */
  async #indexOf(host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext): Promise<SearchIndex> {
    const tools: JsonObject[] = []
    let cursor: unknown
    for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
      const asked: JsonObject = {}
      if (params._meta !== undefined) asked._meta = params._meta
      if (typeof cursor === 'string') asked.cursor = cursor
      const result = await this.#filtered(await this.#list(host, record, asked, ctx), ctx, asked)
      const items = result.tools
      if (Array.isArray(items)) for (const item of items) if (isTool(item)) tools.push(item)
      cursor = result.nextCursor
      if (typeof cursor !== 'string' || cursor === '') break
    }
    return this.#indexes.of(tools.length > MAX_TOOLS ? tools.slice(0, MAX_TOOLS) : tools)
  }

  /** A page as the route's filter phase lets it leave (a tool it drops from tools/list is not found either). */
  async #filtered(result: JsonObject, ctx: RequestContext, params: JsonObject): Promise<JsonObject> {
    const filter = this.#endpoint.filter
    if (filter === undefined) return result
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: 'tools/list', params }
    const answer = await filter.filter(request, ctx.caller.principal, resultMessage(0, result))
    return 'result' in answer ? answer.result : { tools: [] }
  }
}

function isTool(item: unknown): item is JsonObject {
  return item !== null && typeof item === 'object' && !Array.isArray(item) && typeof (item as JsonObject).name === 'string'
}
