/**
 * What goes wrong in a configuration file, with where: every problem found in one load is
 * collected into one `ConfigError`, so a user fixes them all in one pass.
 */
import { EdgeError } from '../wire/errors.ts'
import type { DocPath } from './doc-path.ts'

/** One problem in a config file; `line`/`column` are 1-based and absent for configs built in code. */
export interface ConfigProblem {
  file: string
  line?: number
  column?: number
  /** Dotted path of the offending node, e.g. `routes[0].handler`; `''` for the document itself. */
  path: string
  message: string
}

/** A problem not yet placed in a file: `path` is shown to the user, `at` (default `path`) is located. */
export interface FoundProblem {
  path: DocPath
  at?: DocPath
  message: string
}

/** Formats one problem as `file:line:col: path: message` (parts that are unknown are left out). */
export function formatProblem(problem: ConfigProblem): string {
  let where = problem.file
  if (problem.line !== undefined) {
    where += `:${problem.line}`
    if (problem.column !== undefined) where += `:${problem.column}`
  }
  return problem.path === '' ? `${where}: ${problem.message}` : `${where}: ${problem.path}: ${problem.message}`
}

/** Formats problems one per line, in the order given. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map(formatProblem).join('\n')
}

/** Orders problems as they appear in the file; problems without a position keep their order, last. */
export function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  const rank = (p: ConfigProblem): number => (p.line ?? Infinity) * 1e6 + (p.column ?? 0)
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) => rank(a.problem) - rank(b.problem) || a.index - b.index)
    .map(({ problem }) => problem)
}

/** A configuration that cannot be used; `problems` lists everything wrong with it (at least one). */
export class ConfigError extends EdgeError {
  override readonly code = 'MCP_EDGE_CONFIG_INVALID'
  readonly problems: ConfigProblem[]

  constructor(problems: ConfigProblem[]) {
    const sorted = sortProblems(problems)
    const count = sorted.length === 1 ? '1 problem' : `${sorted.length} problems`
    super('MCP_EDGE_CONFIG_INVALID', `invalid configuration (${count}):\n${formatProblems(sorted)}`)
    this.name = 'ConfigError'
    this.problems = sorted
  }

  /** One line per problem: `config/gateway.yaml:12:5: routes[0].pagination.tools: must be >= 0`. */
  formatProblems(): string {
    return formatProblems(this.problems)
  }
}
