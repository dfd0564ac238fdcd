/**
 * Which component a call names, as its route knows it: the bound on the `component` label. A name is
 * its own label only when the route's registry has it or an upstream listed it; a resource is
 * labelled by its URI when it is a listed resource, by its template when a template matched.
 */
import type { Registry } from '../registry/registry.ts'
import type { ComponentSource } from './call-events.ts'

interface Known {
  readonly registry: Registry
  readonly extension?: { knows?(kind: 'tool' | 'prompt' | 'resource', name: string): string | undefined } | undefined
}

export function routeComponents(endpoint: Known): ComponentSource {
  return {
    knows(method, name) {
      const registry = endpoint.registry
      const extension = endpoint.extension
      switch (method) {
        case 'tools/call':
          return registry.tool(name) !== undefined ? name : extension?.knows?.('tool', name)
        case 'prompts/get':
          return registry.prompt(name) !== undefined ? name : extension?.knows?.('prompt', name)
        case 'resources/read':
        case 'resources/subscribe':
        case 'resources/unsubscribe': {
          const resolved = registry.resolveResource(name)
          if (resolved?.kind === 'resource') return name
          if (resolved?.kind === 'template') return resolved.entry.descriptor.uriTemplate
          return extension?.knows?.('resource', name)
        }
        default:
          return undefined
      }
    },
  }
}
