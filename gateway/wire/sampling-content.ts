/**
 * What a sampling content block must look like, checked the same way on both sides: by the gateway
 * when a client answers `sampling/createMessage`, and by mcp-edge's client when a server asks it.
 */

/** What is wrong with one content block of a sampling message or result, or undefined when nothing is. */
export function samplingContentProblem(block: unknown): string | undefined {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return 'must be an object with a string "type"'
  const fields = block as Record<string, unknown>
  if (typeof fields.type !== 'string') return 'must be an object with a string "type"'
  switch (fields.type) {
    case 'text':
      return typeof fields.text === 'string' ? undefined : 'of type text needs a string "text"'
    case 'image':
    case 'audio':
      return typeof fields.data === 'string' && typeof fields.mimeType === 'string' ? undefined : `of type ${fields.type} needs string "data" and "mimeType"`
    // 2025-11-25 tool use in sampling: checked by their type only.
    case 'tool_use':
    case 'tool_result':
      return undefined
    default:
      return `has an unknown type ${JSON.stringify(fields.type.slice(0, 40))}`
  }
}

/** What is wrong with a `content` that is one block or a non-empty list of blocks, or undefined. */
export function samplingContentListProblem(content: unknown): string | undefined {
  const blocks = Array.isArray(content) ? content : [content]
  if (blocks.length === 0) return 'content must not be empty'
  for (const [index, block] of blocks.entries()) {
    const problem = samplingContentProblem(block)
    if (problem !== undefined) return Array.isArray(content) ? `content[${index}] ${problem}` : `content ${problem}`
  }
  return undefined
}
