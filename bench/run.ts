/**
 * `npm run bench`: every scenario of scenarios.ts side by side, then the costs and the fan-out, in
 * one invocation; one table on stdout and the files report.ts writes.
 *
 *   × BENCH_ROUNDS: each group of rows compared with each other (TURN_GROUPS) in turns (runInTurns:
 *     all its servers up, each warmed up, then BENCH_SLICES turns of durationS / slices seconds each), then for each
 *     other scenario: start its server (own process, core 0) ─► create its sessions ─► check one
 *     answer ─► wrk warm-up ─► wrk measured run (core 1, every answer checked) ─► stop it
 *   costs (costs.ts) ─► fan-out (fanout.ts) ─► [--profile: wrk against a --cpu-prof gateway]
 *   ─► ratios, targets ─► table, bench/results/latest.json, docs/bench.md, docs/bench.svg
 *
 * Environment: BENCH_QUICK=1 (3 s runs), BENCH_DURATION=<s>, BENCH_ROUNDS=<n> (rounds over all
 * scenarios, each row the median; for noisy machines), BENCH_SLICES=<n> (turns of the rows compared
 * with each other, default 5; 1 runs them one after another), BENCH_CONNECTIONS,
 * BENCH_THREADS (wrk -t), BENCH_ONLY=<names,…> (scenario names, `costs`, `fanout`, `proxy-hop`, `catalogue`, `profile`),
 * BENCH_PROXY_RATE (the proxy hop's fixed rate, default 1000 req/s),
 * BENCH_PROFILE=1 or --profile (also take a CPU profile of mcp-edge's hot path; BENCH_PROFILE_SCENARIO
 * picks another scenario, a baseline included), BENCH_DEBUG=1 (servers' output on stderr).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import path from 'node:path'
import { measureCosts, measureRedisCost } from './costs.ts'
import { describeCpus, pinSelfToLoadCore, processTreeCpuUs } from './cpu.ts'
import { measureFanout } from './fanout.ts'
import { measureProxyHop } from './proxy-hop.ts'
import { measureCatalogueCache } from './catalogue-cache.ts'
import { startIssuer } from './issuer.ts'
import { McpHttp, pool } from './mcp-http.ts'
import { formatProfile, monotonicUs, summariseProfile, type ProfileSummary, type Window } from './profile.ts'
import { addRatios, evaluateTargets, formatTable, writeOutputs, type BenchResults, type ScenarioResult } from './report.ts'
import { redisMissing, startRedis } from './redis.ts'
import { FASTIFY, SCENARIOS, SDK, storeTypes, withService, type Scenario } from './scenarios.ts'
import { ROOT, startServer, type RunningServer, type StartOptions } from './servers.ts'
import { runWrk, wrkMissing, type WrkLoad, type WrkResult } from './wrk.ts'
import { runWsLoad } from './ws-load.ts'
import { formatSoak, runSoak } from './soak.ts'

const argv = process.argv.slice(2)
const args = new Set(argv)
/** `--soak <seconds>`: only the soak (soak.ts), for that long. */
const soakSeconds = args.has('--soak') ? Number(argv[argv.indexOf('--soak') + 1] ?? 600) : undefined
const quick = process.env.BENCH_QUICK === '1' || args.has('--quick')
const durationS = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10))
const warmupS = quick ? 1 : 3
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const threads = Number(process.env.BENCH_THREADS ?? 1)
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1))
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim())
const profiling = process.env.BENCH_PROFILE === '1' || args.has('--profile') || only?.includes('profile') === true
const wanted = (name: string): boolean => only === undefined || only.includes(name)
const COST_SESSIONS = 10_000
const COST_REQUESTS = quick ? 20_000 : 50_000
const FANOUT_SESSIONS = 1000

/** JSON-RPC ids: the runner's own calls stay below 1e6, the warm-up and the measured run above. */
const WARMUP_IDS = 1_000_000
const MEASURED_IDS = 100_000_000

const log = (text: string): void => void process.stderr.write(`${text}\n`)

/** A measurement that threw: logged in full, recorded by its first line. */
function failed(error: Error): { skipped: string } {
  log(`  failed: ${error.message}`)
  return { skipped: `failed: ${error.message.split('\n')[0]}` }
}

async function createSessions(url: string, count: number, headers: Record<string, string> = {}): Promise<string[]> {
  if (count === 0) return []
  const client = new McpHttp(url, 20, headers)
  try {
    return await pool(count, 20, () => client.initialize())
  } finally {
    client.close()
  }
}

/** One answer checked by hand before any load, so a misconfigured server fails loudly here. */
async function checkServer(url: string, sessionId: string | undefined, load: WrkLoad, headers: Record<string, string> = {}): Promise<void> {
  const client = new McpHttp(url, 1, headers)
  try {
    const [name, args] = load.viaCallTool === true ? ['call_tool', { name: load.tool, arguments: { message: 'check' } }] : [load.tool, { message: 'check' }]
    const text = await client.callTool(name, args, sessionId, load.stateless === true ? load.protocolVersion : undefined)
    if (text !== 'echo: check') throw new Error(`${load.tool} answered ${JSON.stringify(text)}, expected "echo: check"`)
  } finally {
    client.close()
  }
}

/** A REST row's one answer checked by hand: GET `rest` + `check` on the server's origin. */
async function checkRest(url: string, rest: string): Promise<void> {
  const response = await fetch(`${new URL(url).origin}${rest}check`)
  const text = await response.text()
  if (response.status !== 200 || text !== 'echo: check') throw new Error(`GET ${rest}check answered ${response.status} ${JSON.stringify(text.slice(0, 200))}, expected "echo: check"`)
}

/** Thrown while a scenario is being set up (before any load), so an upcoming one can be skipped. */
class SetupError extends Error {}

/** One measured run: wrk's figures, and the server's CPU per request (µs, its whole process tree) where /proc tells. */
type ScenarioRun = WrkResult & { serverCpuUs?: number; window: Window }

/** A scenario's server up, its sessions made and one answer checked: ready for load. */
interface Prepared {
  server: RunningServer
  /** One run of the scenario's load, for `seconds`. */
  run(seconds: number, idBase: number): Promise<WrkResult>
  stop(): Promise<void>
}

/** A route whose upstreams exchange tokens at the bench issuer (`token_url: issuer`). */
function withTokenUrl(route: Record<string, unknown>, tokenUrl: string): Record<string, unknown> {
  const upstreams = route.upstreams as Array<{ auth?: { token_exchange?: Record<string, unknown> } }> | undefined
  if (upstreams === undefined) return route
  return {
    ...route,
    upstreams: upstreams.map((upstream) => upstream.auth?.token_exchange?.token_url !== 'issuer' ? upstream
      : { ...upstream, auth: { token_exchange: { ...upstream.auth.token_exchange, token_url: tokenUrl } } }),
  }
}

async function prepareScenario(scenario: Scenario, options: StartOptions = {}): Promise<Prepared> {
  const redis = scenario.needs === 'redis' ? await startRedis() : undefined
  // An mcp-edge upstream (the bench handler) for a proxy route to put in front of it.
  const upstream = scenario.needs === 'upstream' ? await startServer({ kind: 'edge' }) : undefined
  // The REST API an openapi upstream fronts.
  const rest = scenario.needs === 'rest' ? await startServer({ kind: 'script', entry: 'bench/servers/rest-echo.ts' }) : undefined
  const issuer = scenario.jwt === true ? await startIssuer() : undefined
  const headers: Record<string, string> = issuer === undefined ? {} : { authorization: issuer.authorization }
  let server: RunningServer | undefined
  let sessions: string[]
  const stop = async (): Promise<void> => {
    await server?.stop()
    await upstream?.stop()
    await rest?.stop()
    await redis?.stop()
    await issuer?.stop()
  }
  try {
    let spec = withService(scenario.server, redis?.url, upstream?.url, rest === undefined ? undefined : new URL(rest.url).origin)
    if (issuer !== undefined && spec.kind === 'edge') spec = { ...spec, route: withTokenUrl({ ...spec.route, ...issuer.route }, `${issuer.url}/token`) }
    server = await startServer(spec, options)
    sessions = await createSessions(server.url, scenario.sessions, headers)
    // Over WebSocket every connection makes its own session and every answer is checked as it comes.
    if (scenario.load.rest !== undefined) await checkRest(server.url, scenario.load.rest)
    else if (scenario.load.websocket !== true) await checkServer(server.url, sessions[0], scenario.load, headers)
  } catch (error) {
    await stop()
    throw new SetupError((error as Error).message)
  }
  const running = server
  const load = issuer === undefined ? scenario.load : { ...scenario.load, authorization: issuer.authorization }
  const run = (seconds: number, idBase: number): Promise<WrkResult> =>
    load.websocket === true
      ? runWsLoad({ url: running.url, connections, durationS: seconds, tool: load.tool, protocolVersion: load.protocolVersion ?? '2025-11-25', idBase })
      : runWrk({ url: running.url, sessions, load, durationS: seconds, connections, threads, idBase })
  return { server: running, run, stop }
}

/** One measured run of `prepared`, with the server's CPU per request over it. */
async function measuredRun(prepared: Prepared, seconds: number, idBase: number): Promise<ScenarioRun> {
  const fromUs = monotonicUs()
  const cpuBefore = processTreeCpuUs(prepared.server.pid)
  const result = await prepared.run(seconds, idBase)
  const cpuAfter = processTreeCpuUs(prepared.server.pid)
  const serverCpuUs = cpuBefore === undefined || cpuAfter === undefined || result.requests === 0 ? undefined : (cpuAfter - cpuBefore) / result.requests
  return { ...result, ...(serverCpuUs === undefined ? {} : { serverCpuUs }), window: { fromUs, toUs: monotonicUs() } }
}

async function runScenario(scenario: Scenario, options: StartOptions = {}): Promise<ScenarioRun> {
  const prepared = await prepareScenario(scenario, options)
  try {
    await prepared.run(warmupS, WARMUP_IDS)
    return await measuredRun(prepared, durationS, MEASURED_IDS)
  } finally {
    await prepared.stop()
  }
}

/** Slices each paired run is cut into (BENCH_SLICES): the rows take turns, a slice each. */
const slices = Math.max(1, Number(process.env.BENCH_SLICES ?? (quick ? 1 : 5)))

/**
 * A group of rows compared with each other, measured in turns: every server up at once (one loaded at a
 * time), each warmed up, then `slices` turns in which each row runs durationS / slices seconds, the
 * first row of a turn rotating. A neighbour busy for a few seconds then slows every row alike, where
 * back-to-back runs of ten seconds each put the whole burst on whichever row ran during it (on a
 * shared 2-core VM raw Fastify alone moved 27–38k req/s between rounds). Each row's figures are
 * its slices summed: requests over seconds, CPU over requests; p50 and p99 the median slice's.
 */
async function runInTurns(scenarios: Scenario[]): Promise<Map<Scenario, ScenarioRun | Error>> {
  const outcomes = new Map<Scenario, ScenarioRun | Error>()
  const prepared = new Map<Scenario, Prepared>()
  try {
    for (const scenario of scenarios) {
      try {
        prepared.set(scenario, await prepareScenario(scenario))
      } catch (error) {
        outcomes.set(scenario, error as Error)
      }
    }
    for (const [, each] of prepared) await each.run(warmupS, WARMUP_IDS)
    const sliceS = Math.max(1, Math.round(durationS / slices))
    const parts = new Map<Scenario, ScenarioRun[]>([...prepared.keys()].map((scenario) => [scenario, []]))
    const order = [...prepared.keys()]
    for (let turn = 0; turn < slices; turn++) {
      for (let i = 0; i < order.length; i++) {
        const scenario = order[(turn + i) % order.length]!
        if (outcomes.has(scenario)) continue
        try {
          parts.get(scenario)!.push(await measuredRun(prepared.get(scenario)!, sliceS, MEASURED_IDS + turn * 10_000_000))
        } catch (error) {
          outcomes.set(scenario, error as Error)
        }
      }
    }
    for (const [scenario, runs] of parts) if (!outcomes.has(scenario)) outcomes.set(scenario, joinSlices(runs, sliceS))
  } finally {
    for (const [, each] of prepared) await each.stop()
  }
  return outcomes
}

/** One row's slices as one run. */
function joinSlices(runs: ScenarioRun[], sliceS: number): ScenarioRun {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  const byP50 = [...runs].sort((a, b) => a.p50Ms - b.p50Ms)
  const middle = byP50[Math.floor(byP50.length / 2)]!
  const cpu = runs.every((run) => run.serverCpuUs !== undefined) ? runs.reduce((sum, run) => sum + run.serverCpuUs! * run.requests, 0) / requests : undefined
  const loads = runs.flatMap((run) => (run.loadCpuPct === undefined ? [] : [run.loadCpuPct]))
  const sample = runs.find((run) => run.sample !== undefined)?.sample
  return {
    requests,
    // wrk's own seconds for each slice (its requests over its rate), not the nominal ones.
    reqPerSec: requests / runs.reduce((sum, run) => sum + (run.reqPerSec > 0 ? run.requests / run.reqPerSec : sliceS), 0),
    p50Ms: middle.p50Ms,
    p99Ms: [...runs].sort((a, b) => a.p99Ms - b.p99Ms)[Math.floor(runs.length / 2)]!.p99Ms,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    checked: runs.reduce((sum, run) => sum + run.checked, 0),
    ...(loads.length === 0 ? {} : { loadCpuPct: Math.round(loads.reduce((sum, pct) => sum + pct, 0) / loads.length) }),
    ...(cpu === undefined ? {} : { serverCpuUs: cpu }),
    ...(sample === undefined ? {} : { sample }),
    window: { fromUs: runs[0]!.window.fromUs, toUs: runs.at(-1)!.window.toUs },
  }
}

/**
 * Rows whose targets compare them with each other, each group measured in turns (runInTurns): raw
 * Fastify and the rows held to it (the JWT row and the phase rows are held to the 1-session row: a
 * filter module + the audit record ≥ 0.9× it, issue 28), and the limits rows with the redis store's,
 * all held to a 50-session row.
 */
const TURN_GROUPS: ReadonlyArray<readonly string[]> = [
  [FASTIFY, 'edge-session', 'edge-default', 'edge-default-admin', 'edge-stateless', 'edge-jwt', 'edge-filter', 'edge-filter-audit', 'edge-rewrite', 'edge-approval-route'],
  ['edge-limits-off', 'edge-50-sessions', 'edge-rate-limit', 'edge-redis'],
]

/**
 * Every wanted scenario, `rounds` times, round after round (so a busy neighbour slows them all
 * alike rather than whichever ran at the wrong moment), the rows of each turn group in turns;
 * each row keeps its median-req/s run, and the errors of all its runs.
 */
async function measureScenarios(): Promise<ScenarioResult[]> {
  const chosen = SCENARIOS.filter((entry) => wanted(entry.name))
  const rows = new Map<Scenario, ScenarioResult>()
  const runs = new Map<Scenario, ScenarioRun[]>()
  for (const scenario of chosen) {
    const reason = scenario.unavailable?.()
    rows.set(scenario, {
      name: scenario.name,
      label: scenario.label,
      group: scenario.group,
      sessions: scenario.sessions,
      tool: scenario.load.tool,
      ...(scenario.sdkPeer === undefined ? {} : { sdkPeer: scenario.sdkPeer }),
      ...(reason === undefined ? {} : { skipped: reason }),
    })
    runs.set(scenario, [])
    if (reason !== undefined) log(`- ${scenario.label}: skipped (${reason})`)
  }
  // The rows of each turn group run in turns (runInTurns), the groups first in each round; the rest
  // one after another (the table keeps the list's order).
  const groups = slices > 1 ? TURN_GROUPS.map((names) => chosen.filter((entry) => names.includes(entry.name))).filter((group) => group.length > 1) : []
  const inTurns = new Set(groups.flat())
  const alone = chosen.filter((entry) => !inTurns.has(entry))
  const record = (scenario: Scenario, outcome: ScenarioRun | Error): void => {
    const row = rows.get(scenario)!
    if (outcome instanceof Error) {
      const message = outcome.message
      row.skipped = `${scenario.upcoming && outcome instanceof SetupError ? 'not working yet' : 'failed'}: ${message.split('\n')[0]}`
      log(`  ${scenario.label}: ${row.skipped}${message.includes('\n') ? `\n${message}` : ''}`)
      return
    }
    runs.get(scenario)!.push(outcome)
    log(
      `  ${inTurns.has(scenario) ? `${scenario.label}: ` : ''}${Math.round(outcome.reqPerSec)} req/s, p50 ${outcome.p50Ms} ms, p99 ${outcome.p99Ms} ms, ${outcome.errors} errors, load generator at ${outcome.loadCpuPct ?? '?'}% of its core` +
        `${outcome.sample ? ` (first: ${outcome.sample})` : ''}`,
    )
  }
  for (let round = 1; round <= rounds; round++) {
    const of = rounds > 1 ? ` (round ${round} of ${rounds})` : ''
    for (const group of groups) {
      const taking = group.filter((scenario) => rows.get(scenario)!.skipped === undefined)
      if (taking.length === 0) continue
      log(`- in turns of ${Math.max(1, Math.round(durationS / slices))} s: ${taking.map((scenario) => scenario.label).join('; ')}${of} …`)
      for (const [scenario, outcome] of await runInTurns(taking)) record(scenario, outcome)
    }
    for (const scenario of alone) {
      if (rows.get(scenario)!.skipped !== undefined) continue
      log(`- ${scenario.label}${of} …`)
      try {
        record(scenario, await runScenario(scenario))
      } catch (error) {
        record(scenario, error as Error)
      }
    }
  }
  for (const [scenario, results] of runs) {
    const row = rows.get(scenario)!
    if (row.skipped !== undefined || results.length === 0) continue
    const median = [...results].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor(results.length / 2)]!
    const sample = results.find((result) => result.sample !== undefined)?.sample
    Object.assign(row, {
      reqPerSec: median.reqPerSec,
      p50Ms: median.p50Ms,
      p99Ms: median.p99Ms,
      errors: results.reduce((sum, result) => sum + result.errors, 0),
      requests: median.requests,
      ...(median.loadCpuPct === undefined ? {} : { loadCpuPct: median.loadCpuPct }),
      ...(median.serverCpuUs === undefined ? {} : { cpuUsPerRequest: median.serverCpuUs }),
      ...(results.length > 1
        ? { runsReqPerSec: results.map((result) => Math.round(result.reqPerSec)), runsP99Ms: results.map((result) => result.p99Ms) }
        : {}),
      ...(results.length > 1 && results.every((result) => result.serverCpuUs !== undefined)
        ? { runsCpuUsPerRequest: results.map((result) => result.serverCpuUs!) }
        : {}),
      ...(sample === undefined ? {} : { sample }),
    })
  }
  return [...rows.values()]
}

async function profileHotPath(): Promise<ProfileSummary> {
  const name = process.env.BENCH_PROFILE_SCENARIO ?? 'edge-session'
  // A baseline can be profiled too, to compare where the time goes against the ceiling.
  const scenario = SCENARIOS.find((entry) => entry.name === name)
  if (scenario === undefined) throw new Error(`BENCH_PROFILE_SCENARIO=${name} is not a scenario`)
  const dir = path.join(ROOT, 'bench/results/profile', new Date().toISOString().replace(/[:.]/g, '-'))
  mkdirSync(dir, { recursive: true })
  log(`profiling ${scenario.label} (${durationS} s under wrk, --cpu-prof into ${path.relative(ROOT, dir)})`)
  const { window } = await runScenario(scenario, { cpuProfileDir: dir })
  const files = readdirSync(dir)
  // One profile per thread (tsx's loader runs in a worker): the main thread's is the largest.
  const profile = files
    .filter((file) => file.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(path.join(dir, b)).size - statSync(path.join(dir, a)).size)[0]
  if (profile === undefined) throw new Error(`no .cpuprofile written in ${dir}`)
  const maps = files.find((file) => file.startsWith('sourcemaps-'))
  const summary = summariseProfile(path.join(dir, profile), maps === undefined ? undefined : path.join(dir, maps), window)
  return { scenario: scenario.label, ...summary }
}

function wrkVersion(): string {
  try {
    return execFileSync('wrk', ['-v'], { encoding: 'utf8' }).split('\n')[0]!.trim()
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? '').split('\n')[0]!.trim()
  }
}

/** `--soak <seconds>`: mixed traffic against one gateway, its memory slopes checked against the targets. */
async function soakOnly(seconds: number): Promise<number> {
  if (!Number.isFinite(seconds) || seconds < 60) {
    log('npm run bench -- --soak <seconds>: at least 60 seconds (a warm-up of 30 s, then the samples the slopes are drawn through)')
    return 1
  }
  pinSelfToLoadCore()
  const load = loadavg().map((n) => n.toFixed(2)).join(' ')
  log(`mcp-edge soak: ${seconds} s; ${describeCpus()}; load average ${load}`)
  if (loadavg()[0]! > cpus().length * 0.25) log('warning: the machine is busy; the traffic will be lighter, the slopes noisier')
  const soak = await runSoak(seconds, log)
  const skipped = { skipped: 'not run (--soak)' }
  const results: BenchResults = {
    generatedAt: new Date().toISOString(),
    environment: { node: process.versions.node, cpu: cpus()[0]?.model ?? 'unknown CPU', cpus: describeCpus(), loadAverage: load, loadAverageAfter: loadavg().map((n) => n.toFixed(2)).join(' ') },
    scenarios: [],
    costs: skipped,
    fanout: skipped,
    redisCost: skipped,
    targets: [],
    soak,
  }
  results.targets = evaluateTargets(results).filter((target) => target.what.startsWith('soak'))
  process.stdout.write(`\n${formatSoak(soak)}\n\ntargets:\n`)
  for (const target of results.targets) process.stdout.write(`  ${target.pass === true ? 'ok' : 'FAIL'}  ${target.what}: ${target.measured} (target ${target.target})\n`)
  const file = path.join(ROOT, 'bench/results/soak.json')
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  process.stdout.write(`\nwrote ${path.relative(ROOT, file)}\n`)
  return results.targets.every((target) => target.pass === true) ? 0 : 1
}

async function main(): Promise<number> {
  if (soakSeconds !== undefined) return soakOnly(soakSeconds)
  const missing = wrkMissing()
  if (missing !== undefined) {
    log(`npm run bench: ${missing}`)
    return 1
  }
  pinSelfToLoadCore()
  const load = loadavg().map((n) => n.toFixed(2)).join(' ')
  log(`mcp-edge bench: ${describeCpus()}; wrk -t${threads} -c${connections} -d${durationS}s ×${rounds} (+${warmupS} s warm-up); load average ${load}`)
  const busy = loadavg()[0]! > cpus().length * 0.25
  if (busy) log('warning: the machine is busy; numbers will be noisy and low')

  const scenarios = await measureScenarios()
  addRatios(scenarios, SDK)

  let costs: BenchResults['costs'] = { skipped: 'not run (BENCH_ONLY)' }
  if (wanted('costs')) {
    log(`- costs: ${COST_SESSIONS} sessions, ${COST_REQUESTS} requests …`)
    costs = await measureCosts(COST_SESSIONS, COST_REQUESTS).catch(failed)
  }
  let redisCost: BenchResults['redisCost'] = { skipped: 'not run (BENCH_ONLY)' }
  if (wanted('costs')) {
    const reason = storeTypes().includes('redis') ? redisMissing() : 'the gateway has no redis store yet'
    if (reason !== undefined) redisCost = { skipped: reason }
    else {
      log(`- Redis bytes per idle session (${COST_SESSIONS} sessions) …`)
      redisCost = await measureRedisCost(COST_SESSIONS).catch(failed)
    }
  }
  let fanout: BenchResults['fanout'] = { skipped: 'not run (BENCH_ONLY)' }
  if (wanted('fanout')) {
    log(`- fan-out to ${FANOUT_SESSIONS} sessions …`)
    fanout = await measureFanout(FANOUT_SESSIONS, quick ? 3 : 7).catch(failed)
  }
  let proxyHop: BenchResults['proxyHop'] = { skipped: 'not run (BENCH_ONLY)' }
  if (wanted('proxy-hop')) {
    const rate = Number(process.env.BENCH_PROXY_RATE ?? 1000)
    log(`- proxy hop: ${rate} req/s, directly and through a proxy route …`)
    proxyHop = await measureProxyHop(rate, quick ? 5 : durationS).catch(failed)
  }
  let catalogue: BenchResults['catalogue'] = { skipped: 'not run (BENCH_ONLY)' }
  if (wanted('catalogue')) {
    log('- list and result caches: a 3-upstream route\'s tools/list and a read-only tool, uncached and cached …')
    catalogue = await measureCatalogueCache(quick ? 3 : durationS).catch(failed)
  }
  const profile = profiling ? await profileHotPath() : undefined

  const results: BenchResults = {
    generatedAt: new Date().toISOString(),
    environment: {
      node: process.versions.node,
      cpu: cpus()[0]?.model ?? 'unknown CPU',
      cpus: describeCpus(),
      wrk: wrkVersion(),
      wrkThreads: threads,
      connections,
      durationS,
      rounds,
      slices,
      warmupS,
      quick,
      loadAverage: load,
      busy,
      loadAverageAfter: loadavg().map((n) => n.toFixed(2)).join(' '),
    },
    scenarios,
    costs,
    fanout,
    redisCost,
    proxyHop,
    catalogue,
    targets: [],
    ...(profile === undefined ? {} : { profile }),
  }
  results.targets = evaluateTargets(results)

  process.stdout.write(`\n${formatTable(results)}\n`)
  if (profile !== undefined) process.stdout.write(`\n${formatProfile(profile)}\n`)
  const written = writeOutputs(results, only !== undefined)
  process.stdout.write(`\nwrote ${written.map((file) => path.relative(ROOT, file)).join(', ')}\n`)
  return 0
}

process.exitCode = await main()
