/**
 * Loads the gateway configuration: YAML file in, `GatewayConfig` out, or one `ConfigError` that
 * lists every problem with its `file:line:col`.
 *
 *   file ─► parseYaml ─► interpolateEnv ─► validateDocument ─► normalise ─► GatewayConfig
 *            (positions)   (${VAR})          (schema.json,       (capabilities,
 *                                             defaults, checks)    handler paths)
 *
 * Problems from interpolation and validation are gathered before anything throws, so one run
 * shows them all; a YAML syntax error stops at parsing, as nothing after it can be trusted.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { ConfigError, type ConfigProblem, type FoundProblem } from './config-error.ts'
import { toDotted, toPointer } from './doc-path.ts'
import { interpolateEnv, type Env } from './interpolate.ts'
import { normalise, type ValidatedDocument } from './normalise.ts'
import type { GatewayConfig } from './types.ts'
import { validateDocument } from './validate.ts'
import { DEFAULT_YAML_BOUNDS, parseYaml, type SourcePosition, type YamlBounds } from './yaml-source.ts'

export { ConfigError, formatProblems, type ConfigProblem } from './config-error.ts'
export type { Env } from './interpolate.ts'

/**
 * The config file used when none is given: `config/gateway.yaml` in the working directory (like
 * nginx's `conf/nginx.conf` under its prefix), so an installed `mcp-edge` serves the project it runs
 * in, and `npm start` in this repository serves the demo config beside it.
 */
export const DEFAULT_CONFIG_FILE = 'config/gateway.yaml'

/** The `file` of a config built in code; its relative handler paths resolve against the cwd. */
export const EMBEDDED = '<embedded>'

type Locate = (pointer: string) => SourcePosition | undefined

/** Reads, interpolates, validates and normalises a YAML config file; throws `ConfigError`. */
export async function loadConfig(file: string, env: Env = process.env): Promise<GatewayConfig> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new ConfigError([{ file, path: '', message: `cannot read the config file: ${reason}` }])
  }
  const source = parseYaml(text, file, yamlBounds(file, env))
  return build(source.doc, file, path.resolve(file), source.locate, env)
}

/** Validates and normalises a config built in code, as `loadConfig` does a file; throws `ConfigError`. */
export function configFromObject(doc: unknown, file: string = EMBEDDED, env: Env = process.env): GatewayConfig {
  return build(doc, file, file === EMBEDDED ? EMBEDDED : path.resolve(file), () => undefined, env)
}

function build(doc: unknown, file: string, absolute: string, locate: Locate, env: Env): GatewayConfig {
  const interpolated = interpolateEnv(doc, env)
  const found = [
    ...interpolated.problems,
    ...validateDocument(interpolated.doc, { coercible: interpolated.coercible, skip: interpolated.failed }),
  ]
  if (found.length > 0) throw new ConfigError(found.map((p) => place(p, file, locate)))
  // validateDocument found nothing, so the document has the shape schema.json describes.
  const config = normalise(interpolated.doc as ValidatedDocument, absolute)
  // The key from the environment obeys the rule schema.json gives the config's own key; resolved
  // here, so the config says which key the gateway will use.
  const envKey = env[REQUEST_STATE_KEY_VARIABLE]
  if (config.request_state.key === undefined && envKey !== undefined && envKey !== '') {
    if (envKey.length < MIN_REQUEST_STATE_KEY) {
      throw new ConfigError([{ file, path: 'request_state.key', message: `${REQUEST_STATE_KEY_VARIABLE} has ${envKey.length} characters; a requestState key needs at least ${MIN_REQUEST_STATE_KEY}, as request_state.key does` }])
    }
    config.request_state.key = envKey
  }
  return config
}

const REQUEST_STATE_KEY_VARIABLE = 'MCP_EDGE_REQUEST_STATE_KEY'
/** The same bound as `request_state.key`'s minLength in schema.json. */
const MIN_REQUEST_STATE_KEY = 16

/** The YAML bounds, from MCP_EDGE_CONFIG_MAX_ALIASES and MCP_EDGE_CONFIG_MAX_NODES when set. */
function yamlBounds(file: string, env: Env): YamlBounds {
  const bound = (name: string, fallback: number): number => {
    const text = env[name]
    if (text === undefined || text === '') return fallback
    const value = Number(text)
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new ConfigError([{ file, path: '', message: `${name} must be a whole number, not ${JSON.stringify(text)}` }])
    }
    return value
  }
  return {
    maxAliases: bound('MCP_EDGE_CONFIG_MAX_ALIASES', DEFAULT_YAML_BOUNDS.maxAliases),
    maxNodes: bound('MCP_EDGE_CONFIG_MAX_NODES', DEFAULT_YAML_BOUNDS.maxNodes),
  }
}

function place(problem: FoundProblem, file: string, locate: Locate): ConfigProblem {
  const position = locate(toPointer(problem.at ?? problem.path))
  return { file, ...position, path: toDotted(problem.path), message: problem.message }
}
