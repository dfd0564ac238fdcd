/**
 * A disease guessing game, one per session (lua-resty-mcp's guess-disease example, without a model:
 * the patient's symptoms are written down in guess-diseases.ts). `config/gateway.yaml` serves it at
 * `/guess`.
 *
 *   start ──► this session gets `guess`, `hint` and guess://game (the others' lists do not change)
 *   hint / wrong guess ──► guess://game replaced with the new state
 *   right guess, or the last wrong one ──► guess, hint and guess://game removed from this session
 *
 * Every worker and host serves any request of a game: the answer lives in `ctx.session.state` (the
 * store), the per-session tools were declared at setup on every worker (`server.declare`) and only
 * shown to the session at run time, and the game's resource is a data resource (its text travels
 * through the store). No module-level map, which another worker could not see.
 */
import { randomInt } from 'node:crypto'
import { defineHandler, ToolError, type SessionView } from 'mcp-edge'
import { DISEASES, names } from './guess-diseases.ts'

const GAME_URI = 'guess://game'
/** Wrong guesses before the game is lost. */
const MAX_WRONG = 3

/** What ctx.session.state holds during a game (the answer never reaches the client before the end). */
interface Game {
  answer: number
  revealed: number
  guesses: string[]
}

/** What guess://game shows. */
function publicView(game: Game): object {
  const disease = DISEASES[game.answer]!
  return {
    symptoms: disease.symptoms.slice(0, game.revealed),
    hintsLeft: disease.symptoms.length - game.revealed,
    guesses: game.guesses,
    wrongGuessesLeft: MAX_WRONG - game.guesses.length,
  }
}

export default defineHandler((mcp, server) => {
  /** The game's state as a data resource: text, not code, so it can be registered per session at run time. */
  const gameResource = (game: Game) =>
    mcp.resource(GAME_URI, 'game', JSON.stringify(publicView(game)), {
      title: 'The game so far',
      description: 'Symptoms revealed, guesses made, what is left',
      mimeType: 'application/json',
    })

  /** Clears the game and takes its tools and resource away from this session. */
  async function end(session: SessionView): Promise<void> {
    await session.state.set(undefined)
    await session.unregisterTool('guess')
    await session.unregisterTool('hint')
    await session.unregisterResource(GAME_URI)
  }

  const hint = mcp.tool(
    'hint',
    async (_args, ctx) => {
      let more = false
      const game = await ctx.session.state.update<Game>((game) => {
        if (game === undefined) throw new ToolError('No game is running: call start')
        more = game.revealed < DISEASES[game.answer]!.symptoms.length
        return more ? { ...game, revealed: game.revealed + 1 } : game
      })
      if (!more) return 'Patient: that is all I can tell you. Make your guess.'
      await ctx.session.replaceResources([gameResource(game!)])
      await ctx.session.resourceUpdated(GAME_URI)
      return `Patient: ${DISEASES[game!.answer]!.symptoms[game!.revealed - 1]}.`
    },
    { title: 'Hint', description: 'Ask the patient for one more symptom', annotations: { readOnlyHint: false } },
  )

  const guess = mcp.tool(
    'guess',
    async ({ disease: guessed }, ctx) => {
      const game = await ctx.session.state.update<Game>((game) => {
        if (game === undefined) throw new ToolError('No game is running: call start')
        return { ...game, guesses: [...game.guesses, guessed] }
      })
      const answer = DISEASES[game!.answer]!
      if (names(answer, guessed)) {
        await end(ctx.session)
        return { outcome: 'won', answer: answer.names[0]!, guesses: game!.guesses.length }
      }
      if (game!.guesses.length >= MAX_WRONG) {
        await end(ctx.session)
        return { outcome: 'lost', answer: answer.names[0]!, guesses: game!.guesses.length }
      }
      await ctx.session.replaceResources([gameResource(game!)])
      await ctx.session.resourceUpdated(GAME_URI)
      return { outcome: 'wrong', answer: null, guesses: game!.guesses.length }
    },
    {
      title: 'Guess',
      description: `Name the disease; after ${MAX_WRONG} wrong guesses the game is lost`,
      inputSchema: { type: 'object', properties: { disease: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['disease'] },
      outputSchema: {
        type: 'object',
        properties: { outcome: { enum: ['won', 'lost', 'wrong'] }, answer: { type: ['string', 'null'] }, guesses: { type: 'integer' } },
        required: ['outcome', 'answer', 'guesses'],
      },
    },
  )

  const start = mcp.tool(
    'start',
    async ({ seed }, ctx) => {
      const answer = typeof seed === 'number' ? seed % DISEASES.length : randomInt(DISEASES.length)
      const game = await ctx.session.state.update<Game>((running) => {
        if (running !== undefined) throw new ToolError('A game is running: guess the disease, or ask for a hint')
        return { answer, revealed: 1, guesses: [] }
      })
      // One change: this session (and no other) now lists guess, hint and the game's resource.
      await ctx.session.register(guess, hint, gameResource(game!))
      return `A patient walks in. Patient: ${DISEASES[answer]!.symptoms[0]}. Ask for a hint or make a guess.`
    },
    {
      title: 'Start a game',
      description: 'Start a round of the disease guessing game: a patient describes symptoms, you name the disease',
      inputSchema: { type: 'object', properties: { seed: { type: 'integer', minimum: 0, description: 'Picks the disease (a reproducible game); random when omitted' } } },
    },
  )

  void server.register(start)
  // Every worker holds guess and hint; a session sees them only once its game started.
  server.declare(guess, hint)
})
