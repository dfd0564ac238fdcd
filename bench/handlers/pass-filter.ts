/** The bench's filter module: looks at every result and lets it pass (what one filter module costs a call). */
import type { FilterCall } from 'mcp-edge'

export default function filter(call: FilterCall): undefined {
  if (call.result.isError === true) return undefined
  return undefined
}
