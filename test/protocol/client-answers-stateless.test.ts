/**
 * The client's answers are checked on the stateless (2026-07-28) wire as they are in a session
 * (client-answers.test.ts): an elicitation's content against its requestedSchema, a sampling result's
 * shape, the roots; in a request's input-required rounds and in a task's input (tasks/update). A
 * malformed answer is the same typed error, the handler's to catch; a well-formed one reaches it.
 * Raw HTTP on loopback (the wire a 2026-07-28 client speaks), one gateway for the file.
 */
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { eventually } from '../fixtures/waiting.ts'

const VERSION = '2026-07-28'
const HANDLER = new URL('./fixtures/answers.ts', import.meta.url).pathname
const CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} }

const gateway = await startGateway(configFromObject({
  listen: { host: '127.0.0.1', port: 0 },
  log: { level: 'silent' },
  routes: [
    { location: '/answers', handler: HANDLER, server: { name: 'answers', version: '1' } },
    { location: '/tasks', handler: HANDLER, server: { name: 'answers', version: '1' }, tasks: { enabled: true, poll_interval: 0.05 } },
  ],
}, '<test>'))
t.teardown(() => gateway.close())

// `any`: parsed JSON from the wire, read by the assertions.
type Json = any // eslint-disable-line @typescript-eslint/no-explicit-any
let ids = 0

/** One 2026-07-28 request; its JSON-RPC result (or the error body). */
async function call(location: string, method: string, params: Json, capabilities: Json = CAPABILITIES): Promise<Json> {
  const name = params.name ?? params.taskId
  const response = await fetch(`${gateway.url}${location}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++ids,
      method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': capabilities } },
    }),
  })
  const text = await response.text()
  // A streamed answer: its last event holds the response.
  const body = text.startsWith('{') ? text : text.split('\n').filter((line) => line.startsWith('data: ')).at(-1)!.slice(6)
  const parsed = JSON.parse(body) as Json
  return parsed.result ?? parsed
}

/** Calls `tool` statelessly, answers its one input request with `answer`, and returns the tool's text. */
async function answered(tool: string, answer: unknown): Promise<string> {
  const first = await call('/answers', 'tools/call', { name: tool })
  if (first.resultType !== 'input_required') throw new Error(`expected input_required, got ${JSON.stringify(first)}`)
  const [key] = Object.keys(first.inputRequests as object)
  const done = await call('/answers', 'tools/call', { name: tool, inputResponses: { [key!]: answer }, requestState: first.requestState })
  return done.content[0].text as string
}

const INVALID = (method: string) => new RegExp(`^invalid answer to ${method.replace('/', '\\/')} \\(MCP_EDGE_CLIENT_ANSWER_INVALID\\): The client's answer to ${method.replace('/', '\\/')} is malformed: `)

t.test('stateless rounds: sampling results are checked', async (t) => {
  t.equal(await answered('sample', { role: 'assistant', model: 'm1', content: { type: 'text', text: 'hello' } }), 'model m1: hello')
  const malformed: Array<[unknown, RegExp]> = [
    [{ role: 'assistant', content: { type: 'text', text: 'x' } }, /model must be a string$/],
    [{ role: 'robot', model: 'm', content: { type: 'text', text: 'x' } }, /role must be "user" or "assistant" \(got "robot"\)$/],
    [{ role: 'assistant', model: 'm', content: [{ type: 'image', data: 'AA==' }] }, /content\[0\] of type image needs string "data" and "mimeType"$/],
    ['a string', /the result is not an object$/],
  ]
  for (const [answer, problem] of malformed) {
    const said = await answered('sample', answer)
    t.match(said, INVALID('sampling/createMessage'), JSON.stringify(answer))
    t.match(said, problem)
  }
})

t.test('stateless rounds: elicitation content is checked against the requestedSchema', async (t) => {
  t.equal(await answered('ask', { action: 'accept', content: { name: 'Ada', age: 36 } }), '{"action":"accept","content":{"name":"Ada","age":36}}')
  t.equal(await answered('ask', { action: 'decline' }), '{"action":"decline"}', 'no content to check')
  const malformed: Array<[unknown, RegExp]> = [
    [{ action: 'accept', content: { age: 3 } }, /content does not match the requested schema: must have required property 'name'$/],
    [{ action: 'accept', content: { name: 'Ada', age: -1 } }, /content does not match the requested schema: \/age must be >= 0$/],
    [{ action: 'maybe' }, /action must be "accept", "decline" or "cancel" \(got "maybe"\)$/],
  ]
  for (const [answer, problem] of malformed) {
    const said = await answered('ask', answer)
    t.match(said, INVALID('elicitation/create'), JSON.stringify(answer))
    t.match(said, problem)
  }
})

t.test('stateless rounds: roots are checked', async (t) => {
  t.equal(await answered('roots', { roots: [{ uri: 'file:///work', name: 'work' }] }), 'file:///work')
  t.match(await answered('roots', { roots: [{ uri: 'https://example.com' }] }), /is malformed: roots\[0\]\.uri must be a file:\/\/ URI/)
  t.match(await answered('roots', { nothing: true }), /is malformed: the result has no "roots" list$/)
})

/** Runs `tool` as a 2026-07-28 task, answers its input with tasks/update, and returns its text. */
async function taskAnswered(tool: string, answer: unknown): Promise<string> {
  const capabilities = { ...CAPABILITIES, extensions: { 'io.modelcontextprotocol/tasks': {} } }
  const created = await call('/tasks', 'tools/call', { name: tool }, capabilities)
  if (created.resultType !== 'task') throw new Error(`expected a task, got ${JSON.stringify(created)}`)
  const taskId = created.taskId as string
  let task: Json
  await eventually(async () => (task = await call('/tasks', 'tasks/get', { taskId }, capabilities)).status === 'input_required')
  const [key] = Object.keys(task.inputRequests as object)
  await call('/tasks', 'tasks/update', { taskId, inputResponses: { [key!]: answer } }, capabilities)
  await eventually(async () => (task = await call('/tasks', 'tasks/get', { taskId }, capabilities)).status === 'completed')
  return task.result.content[0].text as string
}

t.test('a task\'s input is checked the same way', async (t) => {
  t.equal(await taskAnswered('ask', { action: 'accept', content: { name: 'Lin' } }), '{"action":"accept","content":{"name":"Lin"}}')
  t.match(await taskAnswered('ask', { action: 'accept', content: { name: 42 } }), /content does not match the requested schema: \/name must be string$/)
  t.match(await taskAnswered('sample', { role: 'assistant', model: 'm', content: { type: 'video' } }), /is malformed: content has an unknown type "video"$/)
  t.match(await taskAnswered('roots', { roots: [{ uri: 'file:///a', name: 7 }] }), /is malformed: roots\[0\]\.name must be a string$/)
  t.equal(await taskAnswered('roots', { roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] }), 'file:///a,file:///b')
})
