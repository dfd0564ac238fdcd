/**
 * Issue 25, defect 6: two upstreams listing the same resource URI. Two server-everything servers over
 * Streamable HTTP (each lists `demo://resource/static/document/…`), each behind a recorder, under one
 * proxy route: the list shows the URI once, and the read and the subscription go to the upstream
 * that list shows it from (the first in config order), whichever upstream's list came in first.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'

t.setTimeout(120_000)

t.test('one URI, two upstreams: list, read and subscribe agree on the first in config order', async (t) => {
  const [one, two] = await Promise.all([everythingOverHttp(t), everythingOverHttp(t)])
  const first = await roundRobin(t, [one.origin])
  const second = await roundRobin(t, [two.origin])
  const proxy = await gatewayWith(t, [{
    location: '/p',
    server: { name: 'p', version: '1.0.0' },
    upstreams: [{ name: 'first', url: `${first.url}/mcp` }, { name: 'second', url: `${second.url}/mcp` }],
  }])
  const client = new Client({ name: 'same-uri', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/p`)))
  t.teardown(() => client.close())

  const { resources } = await client.listResources()
  const uris = resources.map((resource) => resource.uri)
  const shared = uris.find((uri) => uri.startsWith('demo://resource/static/document/'))
  t.ok(shared !== undefined, `a document both upstreams list: ${shared}`)
  t.equal(uris.filter((uri) => uri === shared).length, 1, 'listed once')
  t.equal(new Set(uris).size, uris.length, 'no URI twice in the list')

  const reads = (log: typeof first.log): number => log.filter((entry) => entry.body?.method === 'resources/read' && (entry.body.params as { uri?: string }).uri === shared).length
  const contents = await client.readResource({ uri: shared! })
  t.equal(contents.contents[0]?.uri, shared, 'the read is answered')
  t.equal(reads(first.log), 1, 'by the first upstream in config order (the one the list shows)')
  t.equal(reads(second.log), 0, 'not by the second')

  await client.subscribeResource({ uri: shared! })
  const subscribed = (log: typeof first.log): number => log.filter((entry) => entry.body?.method === 'resources/subscribe').length
  t.equal(subscribed(first.log), 1, 'the subscription goes to the first upstream too')
  t.equal(subscribed(second.log), 0, 'and not to the second')
})
