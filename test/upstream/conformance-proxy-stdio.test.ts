/**
 * The official conformance suite through a proxy route whose upstream is a stdio child: the child
 * is `mcp-edge stdio` serving mcp-edge's own conformance fixture, the proxy a gateway process
 * (`prefix: never`, a transparent proxy), and the suite runs against the proxy, both revisions on
 * one URL. 2025-11-25 sessions travel on the pool's shared child; 2026-07-28 requests go to the child
 * as they came (it answers server/discover with 2026-07-28), input requests and capabilities untouched.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { runConformance, type Requirements } from '../conformance/run-suite.ts'

const fixture = fileURLToPath(new URL('../../handlers/conformance.ts', import.meta.url))
const bin = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))
const capabilities = { logging: true, completions: true, prompts: { list_changed: true }, resources: { subscribe: true, list_changed: true }, tools: { list_changed: true } }

t.setTimeout(900_000)

t.test('conformance through a proxy route in front of the fixture served over stdio', async (t) => {
  const folder = await mkdtemp(join(tmpdir(), 'mcp-edge-stdio-fixture-'))
  t.teardown(() => rm(folder, { recursive: true, force: true }))
  const upstreamConfig = join(folder, 'fixture.yaml')
  await writeFile(upstreamConfig, JSON.stringify({
    log: { level: 'warn' },
    routes: [{ location: '/mcp', handler: fixture, server: { name: 'mcp-edge-conformance', version: '1.0.0' }, capabilities }],
  }))
  const proxy = await startGatewayProcess(t, {
    routes: [{
      location: '/mcp',
      server: { name: 'mcp-edge-proxy', version: '1.0.0' },
      capabilities,
      resumability: true,
      upstreams: [{ name: 'fixture', command: [process.execPath, bin, 'stdio', '--config', upstreamConfig, '--route', '/mcp'], timeout: 20 }],
      prefix: 'never',
    }],
  })

  for (const revision of ['2025-11-25', '2026-07-28'] as Requirements[]) {
    await t.test(`conformance ${revision} through the stdio upstream`, async (t) => {
      const outDir = await mkdtemp(join(tmpdir(), `mcp-edge-stdio-conformance-${revision}-`))
      const { scenarios } = await runConformance({ url: `${proxy.url}/mcp`, requirements: revision, outDir })
      const scored = scenarios.filter((s) => s.scored)
      t.ok(scored.length > 0, 'the suite lists scored scenarios')
      for (const s of scored) t.ok(s.pass, `${s.name} passes`, { firstFailure: s.firstFailure })
      const passed = scored.filter((s) => s.pass).length
      t.comment(`conformance ${revision} through a stdio upstream: ${passed} passed, ${scored.length - passed} failed (scored)`)
      if (t.passing()) await rm(outDir, { recursive: true, force: true })
      else t.comment(`results kept in ${outDir}`)
    })
  }
  t.equal(proxy.child.exitCode, null, 'the proxy kept running')
})
