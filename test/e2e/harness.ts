// Starting gateways and connecting the official SDK client, for end-to-end tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js'
import { fileURLToPath } from 'node:url'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'

export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url))

interface Teardown { teardown(fn: () => unknown): void }

/** Starts a gateway on a free loopback port with the given routes (YAML keys); closes it at teardown. */
export async function gatewayWith(t: Teardown, routes: object[], extra: object = {}): Promise<Gateway & { url: string }> {
  const config = configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, routes, ...extra }, '<test>')
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  return gateway
}

/** Connects the official SDK client; closes it at teardown. */
export async function connect(t: Teardown, url: string, capabilities: ClientCapabilities = {}, setup?: (client: Client) => void): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' }, { capabilities })
  setup?.(client)
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  t.teardown(async () => {
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  })
  return client
}
