// The guessing game (handlers/guess.ts, served at /guess by the default config) and run-time catalogue
// changes in one gateway process; the same scenarios run across two workers and two hosts in
// test/cluster/catalogue-*.test.ts.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { gatewayWith } from '../e2e/harness.ts'
import { catalogueRoutes, catalogueScenarios } from '../cluster/catalogue-scenarios.ts'

const guess = fileURLToPath(new URL('../../handlers/guess.ts', import.meta.url))
const catalogue = fileURLToPath(new URL('../cluster/fixtures/catalogue.ts', import.meta.url))
const gateway = await gatewayWith(t, catalogueRoutes(guess, catalogue))
catalogueScenarios(t, () => gateway.url, 1)

t.test('the default config serves the game at /guess', async (t) => {
  const config = await loadConfig(DEFAULT_CONFIG_FILE)
  const route = config.routes.find((route) => route.location === '/guess')
  t.equal(route?.handler, guess)
  t.match(route?.server.instructions, /start/)
})
