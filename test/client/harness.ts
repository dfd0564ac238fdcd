// Gateways on loopback and clients connected to them, for the client's tests; everything closes at teardown.
import { fileURLToPath } from 'node:url'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import { McpClient, StreamableHttpTransport, type InitializeOptions, type StreamableHttpOptions } from '../../gateway/client/index.ts'

export const e2eFixture = (name: string): string => fileURLToPath(new URL(`../e2e/fixtures/${name}.ts`, import.meta.url))
export const clientFixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

export const liveRoute = { location: '/live', handler: e2eFixture('live'), server: { name: 'live', version: '1.0.0' } }
export const catalogRoute = {
  location: '/catalog',
  handler: e2eFixture('catalog'),
  server: { name: 'catalog', version: '1.0.0' },
  pagination: { tools: 3, prompts: 1, resources: 2 },
}

interface Teardown { teardown(fn: () => unknown): void }

/** A gateway on a free loopback port; closed at teardown (after the clients, which are torn down first). */
export async function gatewayWith(t: Teardown, routes: object[]): Promise<Gateway & { url: string }> {
  const config = configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, routes }, '<test>')
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  return gateway
}

/** What the client sent, seen through a fetch that only records and forwards: JSON-RPC methods POSTed, every exchange's headers and status. */
export function recordingFetch(): { fetch: typeof fetch; methods: string[]; headers: Headers[]; exchanges: string[] } {
  const methods: string[] = []
  const headers: Headers[] = []
  const exchanges: string[] = []
  const recording: typeof fetch = async (input, init) => {
    headers.push(new Headers(init?.headers))
    let what = init?.method ?? 'GET'
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const body = JSON.parse(init.body) as { method?: string }
      methods.push(body.method ?? 'response')
      what += ` ${body.method ?? 'response'}`
    }
    const response = await fetch(input, init)
    exchanges.push(`${what} ${response.status}`)
    return response
  }
  return { fetch: recording, methods, headers, exchanges }
}

/** An initialized client over Streamable HTTP; closed at teardown. */
export async function httpClient(
  t: Teardown,
  url: string,
  init: InitializeOptions = {},
  transport: Partial<StreamableHttpOptions> = {},
  timeoutMs?: number,
): Promise<McpClient> {
  const client = new McpClient(new StreamableHttpTransport({ url, ...transport }), { clientInfo: { name: 'client-test', version: '1.0.0' }, timeoutMs })
  t.teardown(() => client.close())
  await client.initialize(init)
  return client
}

/** Resolves once `check` holds, polling every 10 ms; rejects after `ms`. */

export const text = (result: { content: unknown[] }): string => (result.content[0] as { text: string }).text

export { eventually } from '../fixtures/waiting.ts'
