#!/usr/bin/env node
/**
 * `npm test`: every test file through tap, the slowest started first.
 *
 * tap 21 always starts files in alphabetical order (@tapjs/run's list.js sorts them, whatever order
 * they are given in), so the longest files, under test/upstream/, started last and the run ended
 * waiting on them. This runner does what `tap` does, with tap's own spawn and the same node
 * arguments, jobs and timeout (package.json's "tap" block), but orders the files by the seconds
 * measured for each in test/slow-files.json, longest first (longest-processing-time scheduling);
 * a file not listed there starts after the listed ones, by name. With tap's jobs running, one more
 * file starts if it fits in the cores the running ones leave idle, by the CPU-seconds measured for
 * each (nextFile). Output is tap's: the TAP stream of every file, then `# { total, pass, fail }`.
 *
 * Two differences. tap loads @tapjs/processinfo into every test process and, through NODE_OPTIONS,
 * every node process a test starts (gateways, workers, stdio servers), to record coverage and what
 * each process loaded (for `tap --changed`). package.json turns coverage off and `npm test` runs
 * every file, so the runner leaves it out: it cost 10 to 20% of the CPU of a file that starts
 * gateways (test/cluster/workers.test.ts: 8.8 CPU-s with it, 7.9 without). Nor does it load the
 * loaders of plugins package.json turns off (see pluginKept).
 *
 *   node test/run-suite.mjs                   every file the "tap" block includes
 *   node test/run-suite.mjs test/edge/*.ts    just those files, slowest first
 *
 * `npx tap test/x.test.ts` still runs a file the usual way (coverage, reporters, --grep and all).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TAP = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).tap
const MEASURED = JSON.parse(readFileSync(path.join(ROOT, 'test/slow-files.json'), 'utf8'))
/** Measured seconds per file (see the file's "measured" note). */
export const SLOW_FILES = MEASURED.seconds
/** Measured CPU-seconds per file: every process it starts, its gateways, workers and servers too. */
export const FILE_CPU = MEASURED.cpu ?? {}

/** Every file `tap` runs: its "include" is `test/**\/*.test.ts`, which test/architecture/suite-set.test.ts holds it to. */
export function suiteFiles() {
  return readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .map((file) => `test/${file.split(path.sep).join('/')}`)
    .filter((file) => file.endsWith('.test.ts') && !file.split('/').includes('node_modules'))
}

/** The files longest first by their measured seconds, then the unmeasured ones by name. */
export function slowestFirst(files) {
  const seconds = (file) => SLOW_FILES[file] ?? 0
  return [...new Set(files)].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b, 'en'))
}

/**
 * The cores a file keeps busy while it runs (its CPU-seconds over its seconds); a file not measured
 * counts as one whole core.
 */
export function coresUsed(file) {
  const cpu = FILE_CPU[file]
  const seconds = SLOW_FILES[file]
  return cpu !== undefined && seconds ? cpu / seconds : 1
}

/**
 * The next file to start, or undefined: the first waiting one while fewer than `jobs` run (tap's
 * pool), and past that, up to `jobs + 1`, the first (so longest) one that fits in the cores the
 * running files leave idle by their measured use. Many long files mostly wait (timers, children
 * starting, idle periods: nginx-keepalive keeps 0.06 cores busy for 41 s), so three of them can
 * leave a core idle, while a fourth file always running (jobs 4) put CPU-heavy files together.
 */
export function nextFile(waiting, running, jobs, cores) {
  if (running.length < jobs) return waiting[0]
  if (running.length > jobs) return undefined
  const idle = cores - running.reduce((sum, file) => sum + coresUsed(file), 0)
  return waiting.find((file) => coresUsed(file) <= idle)
}

/**
 * The plugins package.json's "plugin" list turns off (`!@tapjs/typescript`). The @tapjs/test that npm
 * installs is built with tap's default plugins, and only `tap build` (which the tap CLI runs when the
 * list differs) rebuilds it without them; this runner takes the installed build as it is, so it drops
 * their loaders itself. @tapjs/typescript's loader is the one that matters: it registers ts-node, which
 * loads the TypeScript compiler on Node's loader thread in every test process (about 3 of a trivial
 * file's 3.4 CPU-seconds on Node 24, 4 of 4.8 on Node 20), though tsx (package.json's "node-arg") is
 * what compiles the tests.
 */
const PLUGINS_OFF = (TAP.plugin ?? []).filter((plugin) => plugin.startsWith('!')).map((plugin) => plugin.slice(1))

/** Whether `loader` (a plugin's module, `@tapjs/typescript/import`) belongs to a plugin left on. */
export function pluginKept(loader) {
  return !PLUGINS_OFF.some((plugin) => loader === plugin || loader.startsWith(`${plugin}/`))
}

/**
 * Whether this Node strips TypeScript's types itself (22.18+, 23.6+, 24): then test files run without
 * tsx, and Node's compile cache keeps their code and tap's from one process to the next. The sources
 * are erasable TypeScript with `.ts` specifiers (tsconfig.json's erasableSyntaxOnly holds them to it), so
 * Node runs what tsx would. A test process on Node 24: 0.36 -> 0.21 CPU-s for a trivial file; the
 * whole suite's CPU about a quarter less. Gateways a test starts still go through bin.mjs and tsx, as
 * a user's do.
 */
export const NATIVE_TYPESCRIPT = Boolean(process.features.typescript)
/** package.json's node arguments that load tsx: left out where Node strips types itself. */
const TSX_ARGS = new Set(['--import=tsx', '--import=./gateway/tsx-lexer-ready.mjs'])

/** package.json's "node-arg" list, less tsx's where this Node does not need it. */
export function nodeArgs() {
  return (TAP['node-arg'] ?? []).filter((arg) => !(NATIVE_TYPESCRIPT && TSX_ARGS.has(arg)))
}

/** Where Node's compile cache is kept between test processes (NODE_COMPILE_CACHE; Node 22.1 and later use it). */
export const COMPILE_CACHE = path.join(tmpdir(), 'mcp-edge-test-compile-cache')

/**
 * The node arguments tap gives a test file (@tapjs/run's test-argv.js, which it does not export): the
 * plugins' loaders and source maps, then package.json's "node-arg" list; all but the process-info
 * loader (see above). test/architecture/suite-set.test.ts compares them with `tap node-options`.
 */
export async function testArgv() {
  await import('tap') // @tapjs/test needs @tapjs/core loaded first
  const plugins = await import('@tapjs/test')
  const importLoaders = plugins.importLoaders.filter(pluginKept)
  const loaders = plugins.loaders.filter(pluginKept)
  return [
    ...importLoaders.map((loader) => `--import=${import.meta.resolve(loader)}`),
    ...loaders.map((loader) => `--loader=${import.meta.resolve(loader)}`),
    ...(loaders.length ? ['--no-warnings'] : []),
    '--enable-source-maps',
    ...plugins.execArgv(TAP),
    ...nodeArgs(),
  ]
}

async function main() {
  const args = process.argv.slice(2)
  const files = slowestFirst(args.length ? args.map((file) => path.relative(ROOT, path.resolve(file)).split(path.sep).join('/')) : suiteFiles())
  const argv = await testArgv()
  const { default: t } = await import('tap')
  // A signal to the runner (Ctrl-C, a cancelled CI job) reaches the files running, as tap's runner
  // passes it on, and ends the run: no test process outlives it, no further file starts.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      for (const running of t.pool) running.proc?.kill(signal)
      process.kill(process.pid, signal)
    })
  }
  const jobs = Math.max(1, Math.min(TAP.jobs ?? 1, files.length))
  // tap's pool has room for the extra file; which file starts when is nextFile's to say.
  t.jobs = Math.min(jobs + 1, files.length)
  t.setTimeout(0)
  t.plan(files.length)
  // tap's spawn puts the process-info loader into the child's NODE_OPTIONS; `env` gives the child
  // the NODE_OPTIONS this runner was started with instead.
  const nodeOptions = `NODE_OPTIONS=${process.env.NODE_OPTIONS ?? ''}`
  // A file's own time limit: tap's CLI exports its "timeout" setting as TAP_TIMEOUT, which a test
  // process reads (without it, 30 s); a file that sets none (test/architecture/types.test.ts) gets it.
  const timeout = `TAP_TIMEOUT=${TAP.timeout ?? 30}`
  const cores = availableParallelism()
  const waiting = [...files]
  const running = []
  const startWhatFits = () => {
    for (let file = nextFile(waiting, running, jobs, cores); file !== undefined; file = nextFile(waiting, running, jobs, cores)) {
      waiting.splice(waiting.indexOf(file), 1)
      running.push(file)
      const done = t.spawn('env', [nodeOptions, timeout, `NODE_COMPILE_CACHE=${COMPILE_CACHE}`, process.execPath, ...argv, path.join(ROOT, file)], {
        name: file,
        buffered: t.jobs > 1,
        timeout: (TAP.timeout ?? 30) * 1000,
        cwd: ROOT,
        externalID: file,
        stack: '',
        at: null,
      })
      const ended = () => {
        running.splice(running.indexOf(file), 1)
        startWhatFits()
      }
      void done.then(ended, ended)
    }
  }
  startWhatFits()
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
