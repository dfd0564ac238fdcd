/**
 * A proxy route's indexes, learnt from its upstreams' lists: which upstream an exposed tool or
 * prompt name, a resource URI or a resource template leads to. One rule for lists, reads and
 * subscriptions: a URI two upstreams list belongs to the first in config order, as the aggregated
 * list shows it.
 */
import type { RouteConfig } from '../config/types.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { UriTemplate } from '../registry/uri-template.ts'
import type { ListKind } from './aggregate.ts'
import { Naming, type Origin } from './names.ts'

export class RouteIndex {
  readonly naming: Naming
  /** The route's upstreams' names, in config order. */
  readonly names: ReadonlySet<string>
  /** Exposed tool and prompt names learnt from lists (hashed names need them). */
  readonly tools = new Map<string, Origin>()
  readonly prompts = new Map<string, Origin>()
  /** Resource URI → upstream, and per upstream its templates, learnt from lists. */
  readonly resources = new Map<string, string>()
  readonly templates = new Map<string, Map<string, UriTemplate>>()
  /** Each upstream's place in the route's config. */
  readonly #order: ReadonlyMap<string, number>

  constructor(route: RouteConfig, names: ReadonlySet<string>) {
    this.names = names
    this.#order = new Map([...names].map((name, index) => [name, index]))
    this.naming = new Naming(route, [...names])
  }

  /** Where an exposed tool or prompt name leads, from the index or the name itself. */
  resolveName(kind: 'tool' | 'prompt', exposed: string): Origin | undefined {
    return (kind === 'tool' ? this.tools : this.prompts).get(exposed) ?? this.naming.parse(exposed, kind)
  }

  /** The upstream serving `uri`: the first (config order) that lists it, else the first whose template matches. */
  resolveUri(uri: string): string | undefined {
    const listed = this.resources.get(uri)
    if (listed !== undefined) return listed
    for (const name of this.names) {
      const templates = this.templates.get(name)
      if (templates === undefined) continue
      for (const template of templates.values()) if (template.match(uri) !== undefined) return name
    }
    return this.#only()
  }

  /** The upstream that listed the resource template `uriTemplate`. */
  resolveTemplate(uriTemplate: string): string | undefined {
    for (const name of this.names) if (this.templates.get(name)?.has(uriTemplate) === true) return name
    return this.#only()
  }

  /** Learns one upstream's list page: names and URIs map back to it from now on. */
  learn(kind: ListKind, name: string, items: readonly JsonObject[]): void {
    for (const item of items) {
      if (kind === 'resources' && typeof item.uri === 'string') {
        const holder = this.resources.get(item.uri)
        if (holder === undefined || this.#order.get(name)! < this.#order.get(holder)!) this.resources.set(item.uri, name)
      }
      if (kind === 'resourceTemplates' && typeof item.uriTemplate === 'string') {
        let templates = this.templates.get(name)
        if (templates === undefined) this.templates.set(name, (templates = new Map()))
        if (!templates.has(item.uriTemplate)) {
          try {
            templates.set(item.uriTemplate, new UriTemplate(item.uriTemplate))
          } catch {
            // A template this gateway cannot parse is listed but cannot route reads.
          }
        }
      }
    }
  }

  /** The label of a component an upstream listed (events/call-events.ts): names from its lists only, never parsed from the request. */
  knows(kind: 'tool' | 'prompt' | 'resource', name: string): string | undefined {
    const index = kind === 'tool' ? this.tools : kind === 'prompt' ? this.prompts : this.resources
    return index.has(name) ? name : undefined
  }

  /** A route of one upstream sends everything there. */
  #only(): string | undefined {
    return this.names.size === 1 ? this.names.values().next().value : undefined
  }
}
