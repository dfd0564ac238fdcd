/**
 * DNS-rebinding protection: the Host header, and the Origin header when a browser sends one, must name
 * an allowed host. Loopback names are always allowed (a rebinding attack arrives with the attacker's
 * name in Host); anything else must be listed in the route's `allowed_origins`.
 */

/**
 * True when the request carries more than one Host header. Node keeps the first and drops the rest,
 * so the allow-list would check one name while a proxy in front may have routed on another.
 */
export function hasDuplicateHost(rawHeaders: readonly string[]): boolean {
  let seen = false
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    // The usual spellings first: toLowerCase makes a string per header, on every request.
    if (name.length !== 4 || (name !== 'Host' && name !== 'host' && name.toLowerCase() !== 'host')) continue
    if (seen) return true
    seen = true
  }
  return false
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])
const CACHE_LIMIT = 1024

interface AllowedHost {
  hostname: string
  port: string | undefined
  scheme: string | undefined
}

const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443', ws: '80', wss: '443' }

/** The port a scheme implies when none is written (browsers leave default ports out of Origin). */
function effectivePort(port: string | undefined, scheme: string | undefined): string | undefined {
  return port ?? (scheme === undefined ? undefined : DEFAULT_PORTS[scheme])
}

/** An entry without a port allows any; a request without one (a Host behind TLS termination) is on a default port. */
function portMatches(allowed: string | undefined, requested: string | undefined): boolean {
  if (allowed === undefined || allowed === requested) return true
  return requested === undefined && (allowed === '80' || allowed === '443')
}

function parseEntry(entry: string): AllowedHost {
  const schemeEnd = entry.indexOf('://')
  const scheme = schemeEnd >= 0 ? entry.slice(0, schemeEnd).toLowerCase() : undefined
  const { hostname, port } = splitHost(schemeEnd >= 0 ? entry.slice(schemeEnd + 3).replace(/\/.*$/, '') : entry)
  return { hostname, port, scheme }
}

/** `example.com:8080` → hostname and port; IPv6 literals keep their brackets. */
function splitHost(host: string): { hostname: string; port: string | undefined } {
  const lower = host.trim().toLowerCase()
  const colon = lower.lastIndexOf(':')
  if (colon > 0 && !lower.slice(colon).includes(']') && (lower.startsWith('[') || lower.indexOf(':') === colon)) {
    return { hostname: lower.slice(0, colon), port: lower.slice(colon + 1) }
  }
  return { hostname: lower, port: undefined }
}

/** Decides whether a request's Host and Origin are acceptable; answers are cached per header value. */
export class OriginPolicy {
  readonly #allowed: AllowedHost[]
  readonly #hostCache = new Map<string, boolean>()
  readonly #originCache = new Map<string, boolean>()

  constructor(allowedOrigins: readonly string[]) {
    this.#allowed = allowedOrigins.map(parseEntry)
  }

  /** True when the request may proceed. A missing Host is refused (HTTP/1.1 requires it). */
  allows(host: string | undefined, origin: string | undefined): boolean {
    if (host === undefined) return false
    // Every request asks: a cache hit allocates nothing (no closure, no split).
    let hostVerdict = this.#hostCache.get(host)
    if (hostVerdict === undefined) hostVerdict = remember(this.#hostCache, host, this.#hostAllowed(host, undefined))
    if (!hostVerdict || origin === undefined) return hostVerdict
    const originVerdict = this.#originCache.get(origin)
    return originVerdict ?? remember(this.#originCache, origin, this.#originAllowed(origin))
  }

  #originAllowed(origin: string): boolean {
    const schemeEnd = origin.indexOf('://')
    if (schemeEnd < 0) return false
    return this.#hostAllowed(origin.slice(schemeEnd + 3), origin.slice(0, schemeEnd).toLowerCase())
  }

  #hostAllowed(host: string, scheme: string | undefined): boolean {
    const split = splitHost(host)
    const hostname = split.hostname
    const port = effectivePort(split.port, scheme)
    if (LOOPBACK.has(hostname)) return true
    return this.#allowed.some(
      (entry) =>
        entry.hostname === hostname &&
        portMatches(entry.port, port) &&
        (entry.scheme === undefined || scheme === undefined || entry.scheme === scheme),
    )
  }
}

/** Caches a verdict, starting over when the cache is full (header values an attacker chooses are unbounded). */
function remember(cache: Map<string, boolean>, key: string, verdict: boolean): boolean {
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(key, verdict)
  return verdict
}
