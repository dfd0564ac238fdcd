/**
 * Issue 25, defect 5: concurrent server→client requests on a shared stdio child. Eight sessions
 * call server-everything's `trigger-elicitation-request` at once through one shared child (stdio
 * carries no request a child's elicitation belongs to): every session is asked once, by its own
 * call, and every result carries that session's own answer. The same for sampling.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { everythingServer as everything } from '../fixtures/everything-server.ts'

interface Teardown { teardown(fn: () => unknown): void }

t.setTimeout(180_000)
const texts = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content.map((part) => part.text).join('\n'))
const SESSIONS = 8

interface Asked { client: Client; asked: number }

async function users(t: Teardown, url: string): Promise<Asked[]> {
  return Promise.all(Array.from({ length: SESSIONS }, async (_, i) => {
    const client = new Client({ name: `user-${i}`, version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } })
    const user: Asked = { client, asked: 0 }
    const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10 + ((i * 37) % 60)))
    client.setRequestHandler(ElicitRequestSchema, async () => {
      user.asked++
      await pause()
      return { action: 'accept', content: { name: `user-${i}` } }
    })
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      user.asked++
      await pause()
      return { role: 'assistant', model: `model-of-user-${i}`, content: { type: 'text', text: `said by user-${i}` } }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    t.teardown(() => client.close())
    return user
  }))
}

t.test(`${SESSIONS} sessions elicit at once through one shared child: each answers its own`, async (t) => {
  const gateway = await gatewayWith(t, [{
    location: '/ev',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'everything', command: ['node', everything, 'stdio'], pool: { max: 1 }, timeout: 60 }],
    prefix: 'never',
  }])
  const all = await users(t, `${gateway.url}/ev`)

  for (const round of ['first', 'second']) {
    for (const user of all) user.asked = 0
    const results = await Promise.all(all.map((user) => user.client.callTool({ name: 'trigger-elicitation-request', arguments: {} })))
    results.forEach((result, i) => t.match(texts(result), new RegExp(`- Name: user-${i}\\b`), `${round} round: session ${i}'s result carries its own answer`))
    t.same(all.map((user) => user.asked), Array(SESSIONS).fill(1), `${round} round: each session was asked once`)
  }

  for (const user of all) user.asked = 0
  const sampled = await Promise.all(all.map((user) => user.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } })))
  sampled.forEach((result, i) => t.match(texts(result), new RegExp(`said by user-${i}\\b`), `sampling: session ${i}'s result carries its own answer`))
  t.same(all.map((user) => user.asked), Array(SESSIONS).fill(1), 'sampling: each session was asked once')

  // A tool seen to answer without asking (echo, once alone) runs beside the calls that ask.
  await all[0]!.client.callTool({ name: 'echo', arguments: { message: 'alone' } })
  const asking = all.slice(0, 4).map((user) => user.client.callTool({ name: 'trigger-elicitation-request', arguments: {} }))
  const echoes = await Promise.all(all.slice(4).map((user, i) => user.client.callTool({ name: 'echo', arguments: { message: `e${i}` } })))
  echoes.forEach((result, i) => t.equal(texts(result), `Echo: e${i}`))
  ;(await Promise.all(asking)).forEach((result, i) => t.match(texts(result), new RegExp(`- Name: user-${i}\\b`), `session ${i} beside the echoes`))
})
