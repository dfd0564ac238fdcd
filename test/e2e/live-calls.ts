/**
 * Calls of the live fixture (fixtures/live.ts) that every transport's test makes the same way with
 * the official SDK client: what differs per transport (how the client connects, what it then checks)
 * stays in the test.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Test } from 'tap'

const text = (result: { [key: string]: unknown }): string => (result.content as { text: string }[])[0]!.text

/** The route answers as `live`, lists `slow`, and runs it for 3 steps; the progress values the SDK's handler saw. */
export async function slowWithProgress(t: Test, client: Client): Promise<number[]> {
  t.same(client.getServerVersion(), { name: 'live', version: '1.0.0' })
  const { tools } = await client.listTools()
  t.ok(tools.some((tool) => tool.name === 'slow'))
  const seen: number[] = []
  const result = await client.callTool({ name: 'slow', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p.progress) })
  t.equal(text(result), 'done after 3 steps')
  return seen
}

/** Starts `slow` for 50 steps and aborts it at the second progress; resolves once the client has given up. */
export async function abandonSlow(t: Test, client: Client): Promise<void> {
  const controller = new AbortController()
  const call = client.callTool({ name: 'slow', arguments: { steps: 50 } }, undefined, {
    signal: controller.signal,
    onprogress: (p) => { if (p.progress === 2) controller.abort('enough') },
  })
  await t.rejects(call, 'the client gives up')
}
