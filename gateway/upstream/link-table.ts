/**
 * The upstream links of one proxy route on this worker, by owner and upstream name: a downstream
 * session's own, a stateless principal's pooled one, the health probe's. Made on first use, closed
 * when idle (never the probe's), taken out when their downstream session ends.
 *
 * Two levels of Map, not one keyed by `${owner}\0${upstream}`: every proxied call looks its link up,
 * and the joined key was a new string built, flattened and hashed on each call, where the session
 * id's own hash is already cached (the store looked the session up by it).
 */
import type { UpstreamConfig } from '../config/types.ts'
import type { SessionRecord } from '../store/store.ts'
import { UpstreamLink, type LinkHost, type LinkOwner } from './upstream-link.ts'

/** The owner of the probe links, which belong to no downstream session. */
export const PROBE = '\0probe'
const PROBE_CLIENT = { name: 'mcp-edge-health', version: '0.1.0' }

export class LinkTable {
  readonly #host: LinkHost
  readonly #byOwner = new Map<string, Map<string, UpstreamLink>>()

  constructor(host: LinkHost) {
    this.#host = host
  }

  /**
   * The link of `record`'s session to `upstream`; a stateless request's is pooled per principal and
   * declared client capabilities (the upstream asks only what that client can answer). Either way a
   * link serves one principal, so a per-principal credential never authorises another's exchange.
   */
  of(record: SessionRecord, upstream: UpstreamConfig): UpstreamLink {
    const session = record.id
    const owner = session === '' ? `\0stateless:${record.principal ?? ''}:${JSON.stringify(record.clientCapabilities)}` : session
    return this.#byOwner.get(owner)?.get(upstream.name) ?? this.#add(owner, upstream, {
      session,
      principal: record.principal,
      clientCapabilities: record.clientCapabilities,
      clientInfo: record.clientInfo,
      protocolVersion: session === '' ? undefined : record.protocolVersion,
    })
  }

  /** The health probe's link to `upstream`: the gateway's own session, for no downstream client. */
  probe(upstream: UpstreamConfig): UpstreamLink {
    return this.#byOwner.get(PROBE)?.get(upstream.name)
      ?? this.#add(PROBE, upstream, { session: PROBE, principal: undefined, clientCapabilities: {}, clientInfo: PROBE_CLIENT, protocolVersion: undefined })
  }

  /** Removes `owner`'s links and returns them (its session ended). */
  take(owner: string): UpstreamLink[] {
    const links = this.#byOwner.get(owner)
    if (links === undefined) return []
    this.#byOwner.delete(owner)
    return [...links.values()]
  }

  /** Closes and removes the links last used before `before` (Date.now() time), the probe's excepted. */
  sweep(before: number): void {
    for (const [owner, links] of this.#byOwner) {
      if (owner === PROBE) continue
      for (const [name, link] of links) {
        if (link.lastUsed > before) continue
        links.delete(name)
        link.close()
      }
      if (links.size === 0) this.#byOwner.delete(owner)
    }
  }

  /** Closes every link. */
  close(): void {
    for (const links of this.#byOwner.values()) for (const link of links.values()) link.close()
    this.#byOwner.clear()
  }

  #add(owner: string, upstream: UpstreamConfig, linkOwner: LinkOwner): UpstreamLink {
    const link = new UpstreamLink(this.#host, upstream, linkOwner)
    let links = this.#byOwner.get(owner)
    if (links === undefined) this.#byOwner.set(owner, (links = new Map()))
    links.set(upstream.name, link)
    return link
  }
}
