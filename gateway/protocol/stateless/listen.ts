/**
 * `subscriptions/listen` streams (2026-07-28): a client opts in to list_changed kinds and resource
 * URIs; every message on the stream carries the subscription id. The registry is per route and
 * worker; the notifier feeds it with what happens on any worker. It counts the streams of each client
 * (principal, else address), so the dispatcher can bound them per client and in all.
 */
import type { JsonRpcMessage, JsonRpcNotification, RequestId } from '../../wire/jsonrpc.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'

export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId'

/** What a listen stream asked for and the gateway agreed to. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean
  promptsListChanged?: boolean
  resourcesListChanged?: boolean
  resourceSubscriptions?: string[]
}

const LIST_CHANGED: Record<string, keyof SubscriptionFilter> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
}

export interface ListenStream {
  readonly subscriptionId: RequestId
  readonly filter: SubscriptionFilter
  send(message: JsonRpcMessage): void
  /** Ends the stream gracefully (a complete result carrying the subscription id). */
  end(): void
}

/** The message as this stream must see it: the subscription id in `params._meta`. */
export function tagged(message: JsonRpcNotification, subscriptionId: RequestId): JsonRpcNotification {
  const params: JsonObject = { ...message.params }
  params._meta = { ...(message.params?._meta as JsonObject | undefined), [META_SUBSCRIPTION_ID]: subscriptionId }
  return { jsonrpc: '2.0', method: message.method, params }
}

export class ListenRegistry {
  readonly #streams = new Set<ListenStream>()
  /** Open streams per client key; a client with none has no entry. */
  readonly #byClient = new Map<string, number>()

  get size(): number {
    return this.#streams.size
  }

  /** Streams `client` holds open on this worker. */
  held(client: string): number {
    return this.#byClient.get(client) ?? 0
  }

  /** Adds a stream of `client`; the function returned removes it (once, however often it is called). */
  add(stream: ListenStream, client: string): () => void {
    this.#streams.add(stream)
    this.#byClient.set(client, this.held(client) + 1)
    return () => {
      if (!this.#streams.delete(stream)) return
      const left = this.held(client) - 1
      if (left <= 0) this.#byClient.delete(client)
      else this.#byClient.set(client, left)
    }
  }

  /** Delivers a list_changed or resources/updated notification to the streams that asked for it. */
  deliver(message: JsonRpcNotification): void {
    if (this.#streams.size === 0) return
    const listKey = LIST_CHANGED[message.method]
    const uri = message.method === 'notifications/resources/updated' ? (message.params?.uri as string | undefined) : undefined
    for (const stream of this.#streams) {
      const wanted = listKey !== undefined ? stream.filter[listKey] === true : uri !== undefined && stream.filter.resourceSubscriptions?.includes(uri) === true
      if (wanted) stream.send(tagged(message, stream.subscriptionId))
    }
  }

  endAll(): void {
    for (const stream of this.#streams) stream.end()
    this.#streams.clear()
    this.#byClient.clear()
  }
}
