/**
 * The invocation API the protocol layer calls from its method handlers: one function per MCP method
 * that runs a component. Each lives in a file named for it; this is the one place to import them from.
 */
export { callTool } from './call-tool.ts'
export { getPrompt } from './get-prompt.ts'
export { readResource } from './read-resource.ts'
export { complete, MAX_COMPLETION_VALUES } from './complete.ts'
