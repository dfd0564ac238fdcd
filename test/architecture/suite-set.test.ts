/**
 * `npm test` is test/run-suite.mjs, which starts the slowest files first (tap itself sorts them by
 * name). This keeps it the whole suite: it runs exactly the files tap's "include" names, each once,
 * with the node arguments tap gives a file, and `.ci/run` runs the whole suite through it too.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>
  tap: { include: string[], 'disable-coverage'?: boolean, 'node-arg'?: string[], timeout?: number, plugin?: string[] }
}
const runner = (await import(path.join(ROOT, 'test/run-suite.mjs'))) as {
  suiteFiles: () => string[]
  slowestFirst: (files: string[]) => string[]
  testArgv: () => Promise<string[]>
  NATIVE_TYPESCRIPT: boolean
  COMPILE_CACHE: string
  SLOW_FILES: Record<string, number>
  FILE_CPU: Record<string, number>
  coresUsed: (file: string) => number
  nextFile: (waiting: string[], running: string[], jobs: number, cores: number) => string | undefined
}

/** Every `*.test.ts` under test/, walked here independently of the runner. */
function walk(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? (entry.name === 'node_modules' ? [] : walk(`${dir}/${entry.name}`)) : entry.name.endsWith('.test.ts') ? [`${dir}/${entry.name}`] : [])
}

t.test('npm test is the runner, and the runner is the whole suite', async (t) => {
  t.equal(pkg.scripts.test, 'node test/run-suite.mjs')
  t.same(pkg.tap.include, ['test/**/*.test.ts'], "tap's include is the set the runner walks")
  t.equal(pkg.tap['disable-coverage'], true, 'the runner turns V8 coverage off, as tap does under this setting')
  const everyFile = walk('test').sort()
  t.ok(everyFile.length > 200, `${everyFile.length} test files`)
  const ordered = runner.slowestFirst(runner.suiteFiles())
  t.equal(ordered.length, new Set(ordered).size, 'no file twice')
  t.same([...ordered].sort(), everyFile, 'every test file, no other')
})

t.test('the order: measured files longest first, then the rest by name', async (t) => {
  const ordered = runner.slowestFirst(runner.suiteFiles())
  const seconds = ordered.map((file) => runner.SLOW_FILES[file] ?? 0)
  t.same(seconds, [...seconds].sort((a, b) => b - a), 'never a shorter file before a longer one')
  const measured = Object.keys(runner.SLOW_FILES)
  t.same(ordered.slice(0, measured.length).sort(), [...measured].sort(), 'the measured files first')
  const rest = ordered.slice(measured.length)
  t.same(rest, [...rest].sort((a, b) => a.localeCompare(b, 'en')), 'the unmeasured files by name')
  for (const file of measured) t.ok(ordered.includes(file), `${file} (listed in test/slow-files.json) exists`)
  t.same(runner.slowestFirst(['test/wire/errors.test.ts', 'test/wire/errors.test.ts']), ['test/wire/errors.test.ts'], 'a file named twice runs once')
})

t.test('every measured file has its CPU-seconds, and nothing else has', async (t) => {
  t.same(Object.keys(runner.FILE_CPU).sort(), Object.keys(runner.SLOW_FILES).sort())
  for (const [file, cpu] of Object.entries(runner.FILE_CPU)) t.ok(cpu > 0, `${file}: ${cpu} CPU-s`)
})

t.test('a file beyond tap\'s jobs starts only in the cores the running files leave idle', async (t) => {
  const [waits, busy] = ['test/deploy/nginx-keepalive.test.ts', 'test/server/reload.test.ts']
  t.ok(runner.coresUsed(waits) < 0.2 && runner.coresUsed(busy) > 0.9, 'nginx-keepalive mostly waits; reload keeps a core busy')
  t.equal(runner.coresUsed('test/wire/errors.test.ts'), 1, 'a file not measured counts as a whole core')
  const waiting = runner.slowestFirst(runner.suiteFiles()).filter((file) => file !== waits && file !== busy)
  t.equal(runner.nextFile(waiting, [], 3, 2), waiting[0], 'the longest first')
  t.equal(runner.nextFile(waiting, [busy, busy], 3, 2), waiting[0], 'below tap\'s jobs, whatever the others use')
  t.equal(runner.nextFile(waiting, [busy, busy, busy], 3, 2), undefined, 'at tap\'s jobs, none while the cores are taken')
  const next = runner.nextFile(waiting, [waits, waits, waits], 3, 2)
  t.ok(next !== undefined && runner.coresUsed(next) <= 2 - 3 * runner.coresUsed(waits), `at tap's jobs, the longest that fits in the idle cores: ${next}`)
  t.equal(next, waiting.find((file) => runner.coresUsed(file) <= 2 - 3 * runner.coresUsed(waits)))
  t.equal(runner.nextFile(waiting, [waits, waits, waits, waits], 3, 2), undefined, 'one beyond tap\'s jobs at most')
  t.equal(runner.nextFile([], [], 3, 2), undefined, 'none left')
})

t.test("a file gets tap's node arguments, but for the process-info loader", async (t) => {
  // `tap node-options` prints the loaders tap adds (in no fixed order under tap, which merges in this
  // process's own); the "node-arg" list comes after them.
  const printed = execFileSync(process.execPath, [path.join(ROOT, 'node_modules/tap/dist/esm/run.mjs'), 'node-options'], { cwd: ROOT, encoding: 'utf8' })
  const tapArgs = [...printed.matchAll(/"([^"]+)"/g)].map((match) => match[1]!)
  const processInfo = tapArgs.filter((arg) => arg.includes('@tapjs/processinfo/'))
  t.equal(processInfo.length, 1, 'tap adds the process-info loader')
  // package.json's node-arg last, less tsx's where Node strips types itself.
  const tsx = ['--import=tsx', '--import=./gateway/tsx-lexer-ready.mjs']
  t.same(pkg.tap['node-arg']?.filter((arg) => tsx.includes(arg)), tsx, 'tap (npx tap) loads tsx')
  const nodeArgs = (pkg.tap['node-arg'] ?? []).filter((arg) => !(runner.NATIVE_TYPESCRIPT && tsx.includes(arg)))
  t.equal(runner.NATIVE_TYPESCRIPT, Boolean((process.features as { typescript?: string | false }).typescript))
  const argv = await runner.testArgv()
  t.same(argv.slice(argv.length - nodeArgs.length), nodeArgs, 'package.json\'s node-arg last')
  // The plugins package.json turns off: tap's installed build still lists their loaders.
  const pluginsOff = (pkg.tap.plugin ?? []).filter((plugin) => plugin.startsWith('!')).map((plugin) => `/node_modules/${plugin.slice(1)}/`)
  const kept = tapArgs.filter((arg) => !processInfo.includes(arg) && !pluginsOff.some((plugin) => arg.includes(plugin)))
  t.same(argv.slice(0, argv.length - nodeArgs.length).sort(), kept.sort(), 'before them, what tap adds but process info and the plugins turned off')
  t.notMatch(argv.join(' '), /@tapjs\/typescript/, 'no ts-node: tsx compiles the tests')
})

t.test('no process the runner starts loads process info, and each file gets tap\'s time limit', async (t) => {
  // A file run through the runner that reports its NODE_OPTIONS and node arguments.
  const dir = t.testdir({ 'probe.test.ts': `import t from 'tap'
t.pass(JSON.stringify({ nodeOptions: process.env.NODE_OPTIONS ?? '', execArgv: process.execArgv, timeout: process.env.TAP_TIMEOUT, compileCache: process.env.NODE_COMPILE_CACHE }))
` })
  // Started as from a shell: this process's own process info would add itself to the runner's
  // NODE_OPTIONS, and a TAP_CHILD_ID would hide the counts.
  const out = execFileSync('env', ['NODE_OPTIONS=--max-old-space-size=2048', 'TAP_CHILD_ID=', process.execPath, path.join(ROOT, 'test/run-suite.mjs'), path.join(dir, 'probe.test.ts')], { cwd: ROOT, encoding: 'utf8' })
  t.match(out, /# \{ total: 1, pass: 1 \}/)
  const seen = JSON.parse(/ok 1 - (\{.*\})/.exec(out)![1]!) as { nodeOptions: string, execArgv: string[], timeout?: string, compileCache?: string }
  t.equal(seen.nodeOptions, '--max-old-space-size=2048', 'the NODE_OPTIONS the runner was given, nothing added')
  t.equal(seen.timeout, String(pkg.tap.timeout), "package.json's timeout is the file's own limit, as under tap (not tap's 30 s default)")
  t.notMatch(seen.execArgv.join(' '), /processinfo/)
  if (runner.NATIVE_TYPESCRIPT) t.notMatch(seen.execArgv.join(' '), /tsx/, 'Node strips the types: no tsx')
  else t.match(seen.execArgv.join(' '), /--import=tsx/, 'tsx compiles the test')
  t.equal(seen.compileCache, runner.COMPILE_CACHE, "Node's compile cache, shared by the test processes")
})

t.test('.ci/run runs the whole suite on each Node version, through the runner', async (t) => {
  const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8')
  t.match(ci, /node test\/run-suite\.mjs "\$@"/)
  // Each version's line hands `run` its label and node only: no list of files after them.
  const bin = String.raw`("\$bin"|"\$\(dirname "\$\(command -v node\)"\)")`
  for (const major of ['20', '22', '24']) t.match(ci, new RegExp(String.raw`^    ${major}\) .*run "the whole suite" ${bin}(;| ;;)`, 'm'), `Node ${major}: the whole suite`)
  t.notMatch(ci, /tap\/dist\/esm\/run\.mjs/, 'not tap alone, which would start the slowest files last')
})

t.test(".ci/run ends with each failed file's failed subtests, their diagnostics and its comments", async (t) => {
  // CI views keep a long run's tail only: the Node 20 run's one failure of 2026-12-02 showed just its file name.
  const log = [
    'ok 19 - test/a.test.ts # time=1ms',
    '    # Subtest: two workers',
    '        # 1603 calls in 11.0 s',
    '        ok 1 - no call hung',
    '        not ok 2 - 0 of 20 sessions lost',
    '          ---',
    '          found:',
    '            - "s1: 503"',
    '          ...',
    '    not ok 1 - two workers # time=30000ms',
    'not ok 20 - test/resilience/chaos-workers.test.ts # time=31050.664ms',
    '    ok 1 - quiet',
    'ok 21 - test/z.test.ts # time=2ms',
  ].join('\n')
  const printed = execFileSync('awk', ['-v', 'label=Node v20.20.2: ', '-f', path.join(ROOT, '.ci/failure-detail.awk')], { input: log, encoding: 'utf8' })
  t.equal(printed.split('\n')[0], 'Node v20.20.2: not ok 20 - test/resilience/chaos-workers.test.ts # time=31050.664ms')
  t.match(printed, /# 1603 calls in 11\.0 s/, "the file's comments")
  t.match(printed, /not ok 2 - 0 of 20 sessions lost\n\s+---\n\s+found:\n\s+- "s1: 503"\n\s+\.\.\./, 'the failed subtest with its diagnostics')
  t.notMatch(printed, /ok 1 - no call hung|quiet|z\.test/, 'nothing that passed')
  t.match(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'), /awk -v label="Node \$version: " -f \.ci\/failure-detail\.awk "\$log"/)
})
