/**
 * Typed handlers, both ways, with the TypeScript compiler's API: test/fixtures/typed-handlers/correct.ts
 * (numbers, enums, arrays, nested objects, TypeBox, prompts, templates, the untyped forms) compiles
 * with no error, and each misuse-*.ts fails with exactly the errors its `// expect TSnnnn message`
 * comments name, on those lines. Both under the options of the scaffold's tsconfig (templates/init)
 * and of a default `tsc --init` one (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess…).
 *
 * The fixtures import 'mcp-edge' as a project does; here it resolves to the sources (the package's own
 * `mcp-edge-source` condition) rather than a packed .d.ts, which test/package/package.test.ts covers.
 * Only the fixtures' diagnostics count: the gateway's sources are checked by `tsc` under their own
 * tsconfig. One program per configuration, with parsed files shared between them.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURES = path.join(ROOT, 'test/fixtures/typed-handlers')
const FILES = readdirSync(FIXTURES).filter((name) => name.endsWith('.ts')).sort().map((name) => path.join(FIXTURES, name))

interface Expected { line: number; code: number; message: string }

/** The `// expect TS2339 message` comments of a fixture: one per line that must fail. */
function expectations(file: string): Expected[] {
  return readFileSync(file, 'utf8').split('\n').flatMap((text, index) => {
    const found = /\/\/ expect TS(\d+) (.+)$/.exec(text)
    return found === null ? [] : [{ line: index + 1, code: Number(found[1]), message: found[2]!.trim() }]
  })
}

/** What the scaffold's tsconfig says, plus what reading the gateway's .ts sources needs. */
function options(configFile: string): ts.CompilerOptions {
  const read = ts.readConfigFile(configFile, ts.sys.readFile)
  if (read.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(configFile))
  return { ...parsed.options, noEmit: true, allowImportingTsExtensions: true, customConditions: ['mcp-edge-source'] }
}

/** The options `tsc --init` writes today, read back from a scratch folder. */
function tscInitOptions(): ts.CompilerOptions {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-tsc-init-'))
  try {
    const made = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '--init'], { cwd: dir, encoding: 'utf8' })
    if (made.status !== 0) throw new Error(`tsc --init failed: ${made.stdout}${made.stderr}`)
    return options(path.join(dir, 'tsconfig.json'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// The gateway's sources, @types/node and json-schema-to-ts parse once for both programs.
const parsed = new Map<string, ts.SourceFile | undefined>()
function check(compilerOptions: ts.CompilerOptions): Map<string, readonly ts.Diagnostic[]> {
  const host = ts.createCompilerHost(compilerOptions)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const key = `${JSON.stringify(languageVersion)}:${fileName}`
    if (!parsed.has(key)) parsed.set(key, getSourceFile(fileName, languageVersion, onError, shouldCreate))
    return parsed.get(key)
  }
  const program = ts.createProgram(FILES, compilerOptions, host)
  return new Map(FILES.map((file) => [file, program.getSemanticDiagnostics(program.getSourceFile(file))]))
}

function describe(diagnostic: ts.Diagnostic): Expected {
  const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start!)
  return { line: line + 1, code: diagnostic.code, message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n') }
}

const configurations: [string, () => ts.CompilerOptions][] = [
  ['the scaffold tsconfig (templates/init)', () => options(path.join(ROOT, 'templates/init/tsconfig.json'))],
  ['a default tsc --init tsconfig', tscInitOptions],
]

for (const [name, compilerOptions] of configurations) {
  t.test(name, async (t) => {
    const diagnostics = check(compilerOptions())
    for (const file of FILES) {
      const fixture = path.basename(file)
      const found = diagnostics.get(file)!.map(describe)
      const expected = expectations(file)
      if (fixture === 'correct.ts') {
        t.same(found, [], 'correct.ts compiles with no error')
        t.same(expected, [], 'and expects none')
        continue
      }
      t.ok(expected.length > 0, `${fixture} names the errors it must give`)
      t.same(
        found.map(({ line, code }) => ({ line, code })),
        expected.map(({ line, code }) => ({ line, code })),
        `${fixture}: exactly the expected errors, on the expected lines`,
        { found },
      )
      for (const want of expected) {
        const got = found.find((d) => d.line === want.line && d.code === want.code)
        // The message (as an editor shows it, the chain of reasons) names the problem.
        t.ok(got?.message.includes(want.message), `${fixture}:${want.line} TS${want.code} says "${want.message}"`, { got: got?.message })
      }
    }
  })
}
