/**
 * What the user sees when a call waits for approval: one form elicitation naming the tool, the route,
 * who asks (principal and client) and the call's arguments, cut at `max_shown_chars`, with a single
 * "approve" checkbox that starts unticked. The same ask serves sessions (an `elicitation/create`
 * request on the call's stream) and 2026-07-28 (an input request of an input_required result).
 */
import type { ElicitationSchema, ElicitResult, JsonObject } from '../wire/mcp-types.ts'

/** The key of the approval's input request in a 2026-07-28 input_required result. */
export const APPROVAL_INPUT_KEY = 'mcp-edge/approval'

/** What the ask shows. */
export interface AskFacts {
  readonly id: string
  readonly tool: string
  readonly route: string
  readonly principal: string | undefined
  readonly client: string | undefined
  readonly arguments: unknown
  readonly maxShownChars: number
}

/** The call's arguments as JSON, cut at `max` characters with a note of what was left out. */
export function shownArguments(args: unknown, max: number): string {
  let text: string
  try {
    text = JSON.stringify(args ?? {}) ?? '{}'
  } catch {
    text = '(arguments that cannot be shown as JSON)'
  }
  if (text.length <= max) return text
  return `${text.slice(0, max)}… (${text.length - max} more characters not shown)`
}

/** The message of the approval's elicitation. */
export function askMessage(facts: AskFacts): string {
  const who = facts.principal === undefined ? 'an unauthenticated caller' : facts.principal
  const client = facts.client === undefined ? '' : ` through the client "${facts.client}"`
  return [
    `Approve this tool call? It runs only if you approve it.`,
    `Tool: ${facts.tool} (route ${facts.route})`,
    `Asked by: ${who}${client}`,
    `Arguments: ${shownArguments(facts.arguments, facts.maxShownChars)}`,
    `Approval id: ${facts.id}`,
  ].join('\n')
}

/** The form: one boolean, unticked, that the user ticks to approve. */
export function askSchema(tool: string): ElicitationSchema {
  return {
    type: 'object',
    properties: {
      approve: { type: 'boolean', title: 'Approve', description: `Run ${tool} with the arguments shown`, default: false },
    },
    required: ['approve'],
  }
}

/** The elicitation's params (a session's request, or a 2026-07-28 input request). */
export function askParams(facts: AskFacts): JsonObject {
  return { message: askMessage(facts), requestedSchema: askSchema(facts.tool) as unknown as JsonObject }
}

/** How the user answered: approved only with action accept and the box ticked. */
export type Verdict = 'approved' | 'declined' | 'cancelled'

export function verdictOf(answer: ElicitResult | JsonObject): Verdict {
  if (answer.action === 'cancel') return 'cancelled'
  if (answer.action !== 'accept') return 'declined'
  const content = answer.content as JsonObject | undefined
  return content?.approve === true ? 'approved' : 'declined'
}

/** True for a well-formed elicitation result (what a 2026-07-28 retry must carry under the approval key). */
export function isElicitAnswer(answer: unknown): answer is JsonObject {
  return typeof answer === 'object' && answer !== null && !Array.isArray(answer) && ['accept', 'decline', 'cancel'].includes((answer as JsonObject).action as string)
}
