// Run-time catalogue changes and per-session servers, seen from the official SDK client, written once
// and run against one process (test/handlers/guess.test.ts), two workers (catalogue-workers.test.ts)
// and two hosts on Redis behind a round-robin forwarder (catalogue-hosts.test.ts). Across processes
// every result carries the serving pid in `_meta` (the fixtures add it), so a test can say which
// process served what.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { connect } from '../e2e/harness.ts'

/** The routes the scenarios need: the game and the catalogue fixture, by handler file. */
export function catalogueRoutes(guessHandler: string, catalogueHandler: string): object[] {
  return [
    { location: '/guess', handler: guessHandler, server: { name: 'guess', version: '1.0.0' }, capabilities: { prompts: false } },
    { location: '/catalogue', handler: catalogueHandler, server: { name: 'catalogue', version: '1.0.0' }, capabilities: { prompts: false } },
  ]
}

interface Heard {
  tools: number
  resources: number
}

/** A connected SDK client that counts the list_changed notifications it hears. */
async function player(t: Test, url: string): Promise<{ client: Client; heard: Heard }> {
  const heard: Heard = { tools: 0, resources: 0 }
  const client = await connect(t, url, {}, (client) => {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.tools++)
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void heard.resources++)
  })
  return { client, heard }
}

const toolNames = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name).sort()
const resourceUris = async (client: Client): Promise<string[]> => (await client.listResources()).resources.map((resource) => resource.uri).sort()
const textOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]!.text
const contentText = (read: { contents: unknown[] }): string => (read.contents[0] as { text: string }).text
const pidOf = (result: unknown): number | undefined => (result as { _meta?: { pid?: number } })._meta?.pid

/** Waits until `check` holds (notifications travel on their own stream), or fails after a while. */
async function eventually(check: () => boolean, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

/** Asks the same list `times` times (so each process answers it) and gives the distinct answers. */
async function everywhere<T>(times: number, ask: () => Promise<T>): Promise<T[]> {
  const answers = new Map<string, T>()
  for (let n = 0; n < times; n++) {
    const answer = await ask()
    answers.set(JSON.stringify(answer), answer)
  }
  return [...answers.values()]
}

/** The scenarios; `processes` is how many processes serve the balancer's URL (2 across workers or hosts). */
export function catalogueScenarios(t: Test, base: () => string, processes: number): void {
  t.test('the guessing game, played to the end: its tools and resource are this session\'s only', async (t) => {
    const { client: alice, heard } = await player(t, `${base()}/guess`)
    const { client: bob, heard: bobHeard } = await player(t, `${base()}/guess`)
    const pids: number[] = []
    const move = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await alice.callTool({ name, arguments: args })
      const pid = pidOf(result)
      if (pid !== undefined) pids.push(pid)
      return result
    }
    t.same(await toolNames(alice), ['start'], 'before the game: start only')

    // Seed 3 is appendicitis: the first symptom is the loss of appetite.
    t.match(textOf(await move('start', { seed: 3 })), /no appetite/)
    t.match(textOf(await move('hint')), /navel/, 'a hint on whichever process comes next')
    const wrong = await move('guess', { disease: 'influenza' })
    t.match(wrong.structuredContent, { outcome: 'wrong', answer: null, guesses: 1 })
    t.match(textOf(await move('hint')), /lower right/)

    t.same(await everywhere(processes, () => toolNames(alice)), [['guess', 'hint', 'start']], 'guess and hint, on every process')
    t.same(await everywhere(processes, () => resourceUris(alice)), [['guess://game']], 'and the game\'s resource')
    const games = await everywhere(processes, async () => JSON.parse(contentText(await alice.readResource({ uri: 'guess://game' }))))
    t.same(games, [{ symptoms: ['I have no appetite', 'my belly hurt around the navel', 'the pain moved down to the lower right'], hintsLeft: 1, guesses: ['influenza'], wrongGuessesLeft: 2 }], 'the state, replaced as the game went, the same everywhere')

    t.same(await everywhere(processes, () => toolNames(bob)), [['start']], 'another session lists none of it')
    t.same(await resourceUris(bob), [])
    await t.rejects(bob.callTool({ name: 'guess', arguments: { disease: 'appendicitis' } }), /Unknown tool: guess/, 'nor can call it')
    await t.rejects(bob.readResource({ uri: 'guess://game' }), /not found/i)

    const won = await move('guess', { disease: 'Appendicitis' })
    t.match(won.structuredContent, { outcome: 'won', answer: 'appendicitis', guesses: 2 })
    t.same(await everywhere(processes, () => toolNames(alice)), [['start']], 'the game over: its tools are gone everywhere')
    t.same(await everywhere(processes, () => resourceUris(alice)), [[]], 'and its resource')
    await t.rejects(alice.callTool({ name: 'hint', arguments: {} }), /Unknown tool: hint/)

    t.ok(await eventually(() => heard.tools >= 2 && heard.resources >= 2), `this session heard its lists change (tools ${heard.tools}, resources ${heard.resources})`)
    await sleep(200)
    t.same(bobHeard, { tools: 0, resources: 0 }, 'the other session heard nothing: its lists never changed')
    if (processes > 1) {
      t.equal(new Set(pids).size, processes, `the moves were served by ${processes} processes`)
      // The first four moves are consecutive requests (the lists checked after them come between the others).
      const consecutive = pids.slice(0, 4)
      t.ok(consecutive.every((pid, n) => n === 0 || pid !== consecutive[n - 1]), `each move on another process than the one before: ${consecutive.join(' ')}`)
    }

    // A lost game ends the same way, and a new one can start.
    await move('start', { seed: 0 })
    for (const disease of ['gout', 'asthma']) t.match((await move('guess', { disease })).structuredContent, { outcome: 'wrong' })
    t.match((await move('guess', { disease: 'measles' })).structuredContent, { outcome: 'lost', answer: 'influenza', guesses: 3 })
    t.same(await toolNames(alice), ['start'])
  })

  t.test('route-wide run-time changes are seen alike by every session on every process', async (t) => {
    const { client: a, heard } = await player(t, `${base()}/catalogue`)
    const { client: b, heard: bHeard } = await player(t, `${base()}/catalogue`)
    const listed = async (client: Client) => (await client.listTools()).tools.filter((tool) => tool.name === 'extra').map((tool) => tool.description)

    t.same(await everywhere(processes, () => listed(b)), [[]], 'extra is declared, not listed')
    await a.callTool({ name: 'route_show', arguments: {} })
    t.same(await everywhere(processes, () => listed(b)), [['declared at setup']], 'shown to every session, on every process')
    const answers = await everywhere(processes, async () => textOf(await b.callTool({ name: 'extra', arguments: {} })))
    t.same(answers, ['extra answered'], 'and callable everywhere')

    const again = await b.callTool({ name: 'route_again', arguments: {} })
    t.equal(again.isError, true, 'registering a listed name again is an error, as at setup')
    t.match(textOf(again), /duplicate tool "extra": already registered on this route/)
    await b.callTool({ name: 'route_describe', arguments: { text: 'described at run time' } })
    t.same(await everywhere(processes, () => listed(a)), [['described at run time']], 'a new description, the same everywhere')
    await a.callTool({ name: 'route_note', arguments: { text: 'a note' } })
    const notes = await everywhere(processes, async () => contentText(await b.readResource({ uri: 'note://route' })))
    t.same(notes, ['a note'], 'a data resource registered at run time reads the same everywhere')

    t.equal(textOf(await a.callTool({ name: 'route_hide', arguments: {} })), 'true')
    t.same(await everywhere(processes, () => listed(b)), [[]], 'hidden everywhere')
    await t.rejects(b.callTool({ name: 'extra', arguments: {} }), /Unknown tool: extra/)
    t.equal(textOf(await a.callTool({ name: 'route_hide', arguments: {} })), 'false', 'a second time there was nothing to hide')

    const rogue = await a.callTool({ name: 'register_rogue', arguments: {} })
    t.equal(rogue.isError, true, 'a closure nobody declared is refused')
    t.match(textOf(rogue), /tool:rogue was not declared at setup/)
    t.same(await everywhere(processes, async () => (await b.listTools()).tools.some((tool) => tool.name === 'rogue')), [false])

    t.ok(await eventually(() => heard.tools >= 3 && bHeard.tools >= 3 && bHeard.resources >= 1), `both sessions heard every change (${heard.tools}, ${bHeard.tools})`)
  })

  t.test('a session\'s own changes are that session\'s only, on every process', async (t) => {
    const { client: a, heard } = await player(t, `${base()}/catalogue`)
    const { client: b, heard: bHeard } = await player(t, `${base()}/catalogue`)
    const controls = (await toolNames(b)).length

    await a.callTool({ name: 'session_show', arguments: {} })
    t.same(await everywhere(processes, async () => (await toolNames(a)).includes('mine')), [true], 'the session lists it everywhere')
    t.same(await everywhere(processes, async () => textOf(await a.callTool({ name: 'mine', arguments: {} }))), ['mine answered'])
    t.same(await everywhere(processes, async () => (await toolNames(b)).includes('mine')), [false], 'the other does not')
    await t.rejects(b.callTool({ name: 'mine', arguments: {} }), /Unknown tool: mine/)

    await a.callTool({ name: 'session_replace', arguments: {} })
    t.same(await everywhere(processes, () => toolNames(a)), [['mine']], 'replaceTools: this session now lists that one tool')
    t.equal((await toolNames(b)).length, controls, 'the other keeps the route\'s')
    await t.rejects(a.callTool({ name: 'route_show', arguments: {} }), /Unknown tool: route_show/, 'what it no longer lists it cannot call')

    await b.callTool({ name: 'session_note', arguments: { text: 'for b' } })
    const sessionNotes = async (client: Client) => (await resourceUris(client)).filter((uri) => uri === 'note://session')
    t.same(await everywhere(processes, () => sessionNotes(b)), [['note://session']], 'a data resource of one session\'s own')
    t.same(await sessionNotes(a), [])

    t.ok(await eventually(() => heard.tools >= 2 && bHeard.resources >= 1), 'each heard its own changes')
    await sleep(200)
    t.equal(bHeard.tools, 0, 'b never heard of a\'s tools')
    t.equal(heard.resources, 0, 'nor a of b\'s resource')
  })

  t.test('ctx.session.state: atomic under concurrent updates, bounded, per session', async (t) => {
    const { client: a } = await player(t, `${base()}/catalogue`)
    const { client: b } = await player(t, `${base()}/catalogue`)
    const sums = await Promise.all(Array.from({ length: 16 }, () => a.callTool({ name: 'state_add', arguments: { n: 1 } })))
    t.same(sums.map(textOf).map(Number).sort((x, y) => x - y), Array.from({ length: 16 }, (_, n) => n + 1), 'sixteen concurrent increments, each saw its own total')
    t.same(await everywhere(processes, async () => textOf(await a.callTool({ name: 'state_get', arguments: {} }))), ['16'], 'every process reads the same state')
    t.equal(textOf(await b.callTool({ name: 'state_get', arguments: {} })), 'null', 'another session has its own')
    const big = await a.callTool({ name: 'state_big', arguments: { bytes: 70_000 } })
    t.equal(big.isError, true, 'over limits.session_state (64 KiB by default)')
    t.match(textOf(big), /limits\.session_state/)
    t.equal(textOf(await a.callTool({ name: 'state_get', arguments: {} })), '16', 'and nothing changed')
  })
}
