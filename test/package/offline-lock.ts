/**
 * A package-lock.json for a project that installs the packed mcp-edge tarball, built from this
 * repository's lock: the tarball, the production packages (those `npm ci` put in the npm cache here)
 * and the `extra` dev tools, at the versions locked here. With it, `npm ci --offline` installs the
 * package as a user's project would, from the cache alone (a range needs the registry's metadata,
 * which `npm ci` never caches, so a plain `npm install --offline <tarball>` cannot resolve).
 */
import { readFile } from 'node:fs/promises'

interface LockEntry {
  version?: string
  resolved?: string
  integrity?: string
  dev?: boolean
  devOptional?: boolean
  dependencies?: Record<string, string>
  [key: string]: unknown
}
interface Lock { packages: Record<string, LockEntry>; [key: string]: unknown }

/** The lock and the package.json of a project `name` that depends on `tarball` and on `extra` packages. */
export async function offlineLock(repoLock: string, tarball: { path: string; integrity: string; version: string }, extra: readonly string[]) {
  const lock = JSON.parse(await readFile(repoLock, 'utf8')) as Lock
  const own = lock.packages['']!
  const packages: Record<string, LockEntry> = {}
  const keep = (key: string): void => {
    const entry = lock.packages[key]
    if (entry === undefined || key in packages) return
    const { dev: _dev, devOptional: _devOptional, ...rest } = entry
    packages[key] = rest
    for (const dep of Object.keys(entry.dependencies ?? {})) keep(locate(lock.packages, key, dep))
  }
  for (const [key, entry] of Object.entries(lock.packages)) if (key !== '' && !entry.dev && !entry.devOptional && !entry.link) keep(key)
  for (const name of extra) keep(`node_modules/${name}`)
  const devDependencies = Object.fromEntries(extra.map((name) => [name, lock.packages[`node_modules/${name}`]!.version!]))
  const dependencies = { 'mcp-edge': `file:${tarball.path}` }
  const manifest = { name: 'mcp-edge-package-test', version: '1.0.0', private: true, dependencies, devDependencies }
  packages[''] = { ...manifest }
  packages['node_modules/mcp-edge'] = {
    version: tarball.version,
    resolved: `file:${tarball.path}`,
    integrity: tarball.integrity,
    dependencies: own.dependencies as Record<string, string>,
    bin: own.bin,
  }
  return { manifest, lock: { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages } }
}

/** Where npm finds `dep` from the package at `from`: the nearest node_modules up the tree. */
function locate(packages: Record<string, LockEntry>, from: string, dep: string): string {
  let base = from
  for (;;) {
    const key = `${base === '' ? '' : `${base}/`}node_modules/${dep}`
    if (key in packages) return key
    if (base === '') return key
    const at = base.lastIndexOf('/node_modules/')
    base = at < 0 ? '' : base.slice(0, at)
  }
}
