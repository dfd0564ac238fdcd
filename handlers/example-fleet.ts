/**
 * The deployment fleet behind handlers/example.ts: which version of each service runs in each
 * environment, and each service's history. Plain in-memory TypeScript with no MCP in it, so the
 * handler file shows only the mcp-edge API; a real handler would call a deploy system instead.
 */

export const SERVICES = ['payments', 'checkout', 'search', 'notifications'] as const
export const ENVIRONMENTS = ['staging', 'production'] as const
export type Service = (typeof SERVICES)[number]
export type Environment = (typeof ENVIRONMENTS)[number]
export type Outcome = 'deployed' | 'cancelled' | 'failed' | 'rolled back'

/** What runs in one environment; `previous` is the version a rollback returns to (one level of undo). */
export interface Deployment {
  version: string
  state: 'live' | 'deploying'
  target?: string
  previous?: string
}

export interface HistoryEntry {
  at: string
  environment: Environment
  version: string
  outcome: Outcome
  note?: string
}

/** Instances per environment; the deploy tool's progress messages mention them. */
export const INSTANCES: Record<Environment, number> = { staging: 1, production: 3 }

// Where every fleet starts: payments has a release in staging waiting to be promoted.
const SEED: [Service, Environment, string[]][] = [
  ['payments', 'staging', ['1.4.1', '1.4.2']],
  ['payments', 'production', ['1.4.0', '1.4.1']],
  ['checkout', 'staging', ['2.2.5', '2.3.0']],
  ['checkout', 'production', ['2.2.5', '2.3.0']],
  ['search', 'staging', ['0.9.1']],
  ['search', 'production', ['0.9.1']],
  ['notifications', 'staging', ['3.0.0']],
  ['notifications', 'production', ['3.0.0']],
]

export const isService = (value: string): value is Service => SERVICES.some((service) => service === value)

/** The leading number of a semantic version (`2` for `2.3.0`). */
export const major = (version: string): string => version.split('.')[0] ?? version

function newestFirst(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)]
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (y[i] ?? 0) - (x[i] ?? 0)
  return 0
}

export class Fleet {
  readonly #live = new Map<string, Deployment>()
  readonly #history = new Map<Service, HistoryEntry[]>(SERVICES.map((service) => [service, []]))

  constructor() {
    const at = '2025-01-06T09:00:00.000Z'
    for (const [service, environment, versions] of SEED) {
      for (const version of versions) this.#history.get(service)!.push({ at, environment, version, outcome: 'deployed' })
      this.#live.set(`${environment}/${service}`, { version: versions.at(-1)!, previous: versions.at(-2), state: 'live' })
    }
  }

  current(environment: Environment, service: Service): Deployment {
    return this.#live.get(`${environment}/${service}`)!
  }

  /** Every environment's deployments, as the status resource shows them. */
  status(): Record<Environment, Record<Service, Deployment>> {
    const view = (environment: Environment) =>
      Object.fromEntries(SERVICES.map((service) => [service, { ...this.current(environment, service) }])) as Record<Service, Deployment>
    return { staging: view('staging'), production: view('production') }
  }

  history(service: Service): HistoryEntry[] {
    return [...this.#history.get(service)!]
  }

  /** Versions that reached an environment (any environment when omitted), newest first, without repeats. */
  versions(service: Service, environment?: Environment): string[] {
    const reached = this.#history.get(service)!.filter((e) => e.outcome === 'deployed' && (environment ?? e.environment) === e.environment)
    return [...new Set(reached.map((e) => e.version))].sort(newestFirst)
  }

  begin(environment: Environment, service: Service, version: string): void {
    Object.assign(this.current(environment, service), { state: 'deploying', target: version })
  }

  /** Ends a deployment begun with `begin`; only `deployed` changes what runs. */
  finish(environment: Environment, service: Service, outcome: Outcome, note?: string): void {
    const deployment = this.current(environment, service)
    const version = deployment.target ?? deployment.version
    if (outcome === 'deployed') Object.assign(deployment, { previous: deployment.version, version })
    deployment.state = 'live'
    delete deployment.target
    this.#record(service, { environment, version, outcome, note })
  }

  /** Returns to the previous version; false when there is none. */
  rollback(environment: Environment, service: Service, note: string): boolean {
    const deployment = this.current(environment, service)
    if (deployment.previous === undefined) return false
    deployment.version = deployment.previous
    delete deployment.previous
    this.#record(service, { environment, version: deployment.version, outcome: 'rolled back', note })
    return true
  }

  #record(service: Service, entry: Omit<HistoryEntry, 'at'>): void {
    const { note, ...rest } = entry
    this.#history.get(service)!.push({ at: new Date().toISOString(), ...rest, ...(note === undefined ? {} : { note }) })
  }
}
