/**
 * The public API for handler authors: `import { defineHandler } from 'mcp-edge'`.
 *
 *   export default defineHandler((mcp, server) => {
 *     server.register(mcp.tool('echo', ({ message }) => `Tool echo: ${message}`, { inputSchema: … }))
 *   })
 */
export { defineHandler, isHandler, type Handler, type HandlerSetup } from './registry/define-handler.ts'
export { mcp, ToolError } from './registry/components.ts'
export type * from './registry/components.ts'
export type { PromptArgs, SchemaType, TemplateVariables, ToolArgs, ToolErrorReturn, StructuredResult } from './registry/declared-types.ts'
export type * from './registry/context.ts'
export type * from './registry/route-server-api.ts'
export type * from './wire/mcp-types.ts'
export { LOG_LEVELS } from './wire/mcp-types.ts'
export { ClientAnswerError, EdgeError, McpError, RpcCode } from './wire/errors.ts'
export { InvalidClientAnswerError } from './protocol/client-answers.ts'
export { defineAccess } from './edge/access-module.ts'
export type { FilterAnswer, FilterCall, FilterModule } from './phases/filter-phase.ts'
export type { LogModule } from './phases/log-phase.ts'
export type { RewriteAnswer, RewriteCall, RewriteModule } from './phases/rewrite-phase.ts'
export type { ComponentRewrite, RewriteConfig } from './config/types.ts'
export type { CallEvent } from './events/call-events.ts'
export type { AccessRequest, AccessDecision, AllowDecision, DenyDecision, AddScopesDecision, AccessFunction, AccessModule } from './edge/access-module.ts'
export type { Caller } from './wire/caller.ts'
