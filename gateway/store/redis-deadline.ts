/**
 * Writes that cannot take effect after they were answered as failed. A command that times out on
 * the gateway (Redis frozen: a long script, a fork, SIGSTOP, a network stall) is still in Redis's
 * input buffer, and Redis runs it when it wakes: a DELETE answered 503 ended the session seconds
 * later, a `ctx.session.state.set` answered as failed was applied after all. So each write script
 * carries a deadline, in Redis's own clock, and does nothing once it has passed:
 *
 *   sent at t ──► deadline = t + offset + ¾ × command_timeout ──► script: TIME > deadline? ─yes─► error, nothing written
 *                                                                     └─no──► written; the reply has ¼ of the
 *                                                                             timeout left to arrive
 *
 * `offset` (Redis's clock minus this host's) is measured each time the connection is ready, from one
 * TIME round trip (its error is half that round trip), so hosts with skewed clocks still agree.
 */
import type { RedisClient } from './redis-connection.ts'

/** The share of the command timeout a write has to reach Redis; the rest is for its reply to come back. */
const REACH_SHARE = 0.75

export class WriteDeadline {
  readonly #reachMs: number
  #offsetMs = 0

  constructor(commandTimeoutMs: number) {
    this.#reachMs = Math.max(1, Math.floor(commandTimeoutMs * REACH_SHARE))
  }

  /** The latest Redis time (ms since the epoch) at which a write sent now may still be applied. */
  next(): number {
    return Math.floor(Date.now() + this.#offsetMs + this.#reachMs)
  }

  /** Measures Redis's clock against this host's; a failure keeps the last measure. */
  async learn(client: RedisClient): Promise<void> {
    try {
      const before = Date.now()
      const [seconds, micros] = (await client.time()) as [string | number, string | number]
      const after = Date.now()
      this.#offsetMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - (before + after) / 2
    } catch {
      // Redis went away again; the next 'ready' measures.
    }
  }
}

/**
 * The Lua prologue of a guarded write: its last ARGV is the deadline (Redis ms); past it, an error
 * reply and nothing written. The error reaches a client still waiting as a store failure (503).
 */
export const DEADLINE_GUARD = `local deadline = tonumber(ARGV[#ARGV])
if deadline and deadline > 0 then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > deadline then
    return redis.error_reply('MCPEDGE_LATE the write reached Redis after its deadline and was not applied')
  end
end
`
