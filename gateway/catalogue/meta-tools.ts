/**
 * What a model sees of a route in search mode (`catalogue: search`): four small tools instead of the
 * route's whole list, and how their answers read. Names and words here are the model's interface:
 * short, and each description says when to use the tool and what comes next.
 */
import type { JsonObject } from '../wire/mcp-types.ts'
import { titleOf, type SearchHit } from './search-index.ts'

export const SEARCH_TOOLS = 'search_tools'
export const DESCRIBE_TOOL = 'describe_tool'
export { CALL_TOOL } from '../wire/called-tool.ts'
import { CALL_TOOL } from '../wire/called-tool.ts'
export const LOAD_TOOLS = 'load_tools'

/** The meta-tools' names: a route tool of the same name is shadowed by them in search mode. */
export const META_TOOLS: ReadonlySet<string> = new Set([SEARCH_TOOLS, DESCRIBE_TOOL, CALL_TOOL, LOAD_TOOLS])

/** Longest description a hit shows; describe_tool gives the whole of it. */
const HIT_DESCRIPTION = 240

/** The meta-tools' descriptors, as tools/list shows them; load_tools only where sessions may load tools. */
export function metaDescriptors(maxResults: number, maxLoaded: number): { all: JsonObject[]; withoutLoad: JsonObject[] } {
  const withoutLoad: JsonObject[] = [
    {
      name: SEARCH_TOOLS,
      title: 'Search tools',
      description: "This server has more tools than it lists. Find the ones for a task by describing it in a few words (what it does, the objects it works on). Returns the best matches with their arguments; then use call_tool, or describe_tool for a tool's full schema.",
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What the tool should do, e.g. "read a text file" or "add an observation to an entity".' },
          limit: { type: 'integer', minimum: 1, maximum: maxResults, description: `How many matches to return (at most ${maxResults}).` },
        },
        required: ['query'],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: DESCRIBE_TOOL,
      title: 'Describe a tool',
      description: "The full definition of one tool found with search_tools: its description, input schema (the arguments call_tool needs), output schema and annotations.",
      inputSchema: { type: 'object', properties: { name: { type: 'string', description: 'The tool name search_tools returned.' } }, required: ['name'] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: CALL_TOOL,
      title: 'Call a tool',
      description: "Calls one tool of this server by name with its arguments (checked against the tool's input schema) and returns the tool's own result.",
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The tool name search_tools returned.' },
          arguments: { type: 'object', description: "The tool's arguments, as its input schema describes them.", additionalProperties: true },
        },
        required: ['name'],
      },
    },
  ]
  if (maxLoaded === 0) return { all: withoutLoad, withoutLoad }
  const load: JsonObject = {
    name: LOAD_TOOLS,
    title: 'Load tools',
    description: `Adds tools found with search_tools to this session's tool list (at most ${maxLoaded}), so they can be called directly from then on.`,
    inputSchema: {
      type: 'object',
      properties: { names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: maxLoaded, description: 'Tool names search_tools returned.' } },
      required: ['names'],
    },
  }
  return { all: [...withoutLoad, load], withoutLoad }
}

/** search_tools' answer: a line per hit (name, title, arguments, description), and the same as structured content. */
export function hitsResult(query: string, hits: readonly SearchHit[], listed: number): JsonObject {
  if (hits.length === 0) {
    return { content: [{ type: 'text', text: `No tool of the ${listed} this server offers you matches "${query}". Try other words.` }], structuredContent: { tools: [] } }
  }
  const lines: string[] = []
  const tools: JsonObject[] = []
  for (const { tool } of hits) {
    const name = String(tool.name)
    const title = titleOf(tool)
    const description = typeof tool.description === 'string' ? tool.description : ''
    const short = description.length > HIT_DESCRIPTION ? `${description.slice(0, HIT_DESCRIPTION - 1)}…` : description
    const args = argumentsOf(tool)
    lines.push(`- ${name}(${args})${title === '' ? '' : ` [${title}]`}: ${short}`)
    const hit: JsonObject = { name, description: short, arguments: args }
    if (title !== '') hit.title = title
    tools.push(hit)
  }
  const text = `The best ${hits.length} of the ${listed} tools offered here. Call one with call_tool {name, arguments}; describe_tool {name} shows its full schema.\n${lines.join('\n')}`
  return { content: [{ type: 'text', text }], structuredContent: { tools } }
}

/** describe_tool's answer: the tool's descriptor as it would be listed, as JSON text and structured content. */
export function describeResult(tool: JsonObject): JsonObject {
  return { content: [{ type: 'text', text: JSON.stringify(tool) }], structuredContent: tool }
}

/** An `isError` result the model reads. */
export function metaError(text: string): JsonObject {
  return { content: [{ type: 'text', text }], isError: true }
}

/** `a, b?, c` for the properties of a tool's input schema (`?`: optional). */
function argumentsOf(tool: JsonObject): string {
  const schema = tool.inputSchema as { properties?: unknown; required?: unknown } | undefined
  const properties = schema?.properties !== null && typeof schema?.properties === 'object' ? Object.keys(schema.properties) : []
  const required = new Set(Array.isArray(schema?.required) ? schema.required : [])
  return properties.map((name) => (required.has(name) ? name : `${name}?`)).join(', ')
}
