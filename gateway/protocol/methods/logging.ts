/** logging/setLevel: the minimum level of notifications/message for the session, kept in the store. */
import { McpError, RpcCode } from '../../wire/errors.ts'
import { LOG_LEVELS, type LogLevel } from '../../wire/mcp-types.ts'
import type { MethodTable } from './method-handler.ts'

const levels: ReadonlySet<string> = new Set(LOG_LEVELS)

export const loggingMethods: MethodTable = {
  'logging/setLevel': async (host, record, params) => {
    const level = params.level
    if (typeof level !== 'string' || !levels.has(level)) {
      throw new McpError(RpcCode.InvalidParams, `params.level must be one of ${LOG_LEVELS.join(', ')}`)
    }
    await host.store.update(record.id, { logLevel: level as LogLevel })
    return {}
  },
}
