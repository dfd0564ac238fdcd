/**
 * Whether `mcp-edge start` may run without a configured requestState key. A stateless request's
 * rounds may land on different processes, and each must verify what another signed:
 *
 *   redis store, no key             ─► refused: the hosts sharing the store would each sign with a key of their own
 *   several workers (cluster store) ─► warned: the primary makes one key for its workers, lost on a restart
 *   one process, memory store       ─► nothing to say: one random key for the life of the process
 *
 * Decided in the primary (or the single process) before any key is generated: a worker inherits the
 * primary's key through its environment and sees it as configured.
 */
import type { GatewayConfig } from '../config/types.ts'

export type KeyVerdict = { refuse: string } | { warn: string } | undefined

/** What starting `config` without `request_state.key` (nor MCP_EDGE_REQUEST_STATE_KEY) calls for. */
export function requestStateKeyVerdict(config: GatewayConfig): KeyVerdict {
  if (config.request_state.key !== undefined) return undefined
  if (config.store.type === 'redis') {
    return { refuse: 'store type redis is shared across hosts, and request_state.key is not set (nor MCP_EDGE_REQUEST_STATE_KEY): each host would sign stateless requestState with a key of its own, and a round that reaches another host would be refused; set the same key (16+ characters) on every host' }
  }
  if (config.store.type === 'cluster' || config.workers === 'auto' || config.workers > 1) {
    return { warn: 'request_state.key is not set (nor MCP_EDGE_REQUEST_STATE_KEY): the primary made a random key for its workers, so requestState signed before a restart is refused after it (as invalid params) and another host cannot verify it; set request_state.key' }
  }
  return undefined
}
