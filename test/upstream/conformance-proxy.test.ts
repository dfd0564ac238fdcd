/**
 * The official conformance suite through a proxy route: one gateway process serves mcp-edge's own
 * conformance fixture, a second one proxies it (`prefix: never`, a transparent proxy), and the suite
 * runs against the second, both revisions on one URL. 2025-11-25 travels on upstream sessions kept in
 * the store; 2026-07-28 stateless requests go up stateless (the fixture speaks that revision), the
 * fixture's own requestState riding inside the proxy's.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { runConformance, type Requirements } from '../conformance/run-suite.ts'

const fixture = fileURLToPath(new URL('../../handlers/conformance.ts', import.meta.url))
const capabilities = { logging: true, completions: true, prompts: { list_changed: true }, resources: { subscribe: true, list_changed: true }, tools: { list_changed: true } }

t.setTimeout(600_000)

t.test('conformance through a proxy route in front of the fixture served by another process', async (t) => {
  const upstream = await startGatewayProcess(t, {
    routes: [{ location: '/mcp', handler: fixture, server: { name: 'mcp-edge-conformance', version: '1.0.0' }, capabilities, resumability: true }],
  })
  const proxy = await startGatewayProcess(t, {
    routes: [{
      location: '/mcp',
      server: { name: 'mcp-edge-proxy', version: '1.0.0' },
      capabilities,
      resumability: true,
      upstreams: [{ name: 'fixture', url: `${upstream.url}/mcp` }],
      prefix: 'never',
    }],
  })

  for (const revision of ['2025-11-25', '2026-07-28'] as Requirements[]) {
    await t.test(`conformance ${revision} through the proxy`, async (t) => {
      const outDir = await mkdtemp(join(tmpdir(), `mcp-edge-proxy-conformance-${revision}-`))
      const { scenarios } = await runConformance({ url: `${proxy.url}/mcp`, requirements: revision, outDir })
      const scored = scenarios.filter((s) => s.scored)
      t.ok(scored.length > 0, 'the suite lists scored scenarios')
      for (const s of scored) t.ok(s.pass, `${s.name} passes`, { firstFailure: s.firstFailure })
      const passed = scored.filter((s) => s.pass).length
      t.comment(`conformance ${revision} through a proxy route: ${passed} passed, ${scored.length - passed} failed (scored)`)
      if (t.passing()) await rm(outDir, { recursive: true, force: true })
      else t.comment(`results kept in ${outDir}`)
    })
  }
  t.equal(proxy.child.exitCode, null, 'the proxy kept running')
  t.notOk(proxy.logs.some((line) => line.level === 50 && line.msg === 'handler failed'), 'no request failed inside the proxy')
})
