/**
 * `mcp-edge init [DIR]`: a project that serves one route from its own folder.
 *
 *   DIR/config/gateway.yaml   one route, /mcp, served by handlers/hello.ts
 *   DIR/handlers/hello.ts     a handler module (TypeScript, loaded at start; no build step)
 *   DIR/tsconfig.json         type-checks the handlers against the package's .d.ts
 *   DIR/package.json          created, or given the missing scripts, "type": "module" and dependencies
 *   DIR/Dockerfile            the gateway with this config and these handlers
 *   DIR/mcp-edge-*.tgz        when mcp-edge was installed from a tarball outside DIR: a copy, so that
 *                             the Docker build (whose context is DIR) can install it too
 *
 * A file that exists is kept as it is (and said so): init never overwrites the user's work.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The template files, as `[source in templates/init, destination in DIR]`. */
const FILES: readonly (readonly [string, string])[] = [
  ['config/gateway.yaml', 'config/gateway.yaml'],
  ['handlers/hello.ts', 'handlers/hello.ts'],
  ['tsconfig.json', 'tsconfig.json'],
  ['Dockerfile', 'Dockerfile'],
  // Shipped without its dot: npm pack treats some dotfiles specially (.gitignore, .npmignore).
  ['dockerignore', '.dockerignore'],
]

const SCRIPTS: Readonly<Record<string, string>> = {
  start: 'mcp-edge start',
  check: 'mcp-edge check',
  typecheck: 'tsc --noEmit',
}

// Both gateway/init/ (the checkout) and dist/init/ (the package) sit two levels below the root.
const ROOT = new URL('../../', import.meta.url)
const TEMPLATES = fileURLToPath(new URL('templates/init/', ROOT))

interface PackageJson {
  name?: string
  type?: string
  main?: unknown
  scripts?: Record<string, string>
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  [key: string]: unknown
}

/** Scaffolds `dir` and prints what it did; resolves to the exit code (0, or 2 when DIR is unusable). */
export async function scaffold(dir: string, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const target = path.resolve(dir)
  try {
    await mkdir(target, { recursive: true })
    for (const [from, to] of FILES) {
      const destination = path.join(target, to)
      if (existsSync(destination)) {
        out.write(`kept     ${to} (exists)\n`)
        continue
      }
      await mkdir(path.dirname(destination), { recursive: true })
      await copyFile(path.join(TEMPLATES, from), destination)
      out.write(`created  ${to}\n`)
    }
    out.write(`${(await writePackageJson(target)).padEnd(9)}package.json\n`)
    const tarball = await bringTarballIn(target)
    if (tarball !== undefined) out.write(tarball)
  } catch (error) {
    process.stderr.write(`mcp-edge init: ${(error as Error).message}\n`)
    return 2
  }
  out.write(`\nnext: cd ${path.relative(process.cwd(), target) || '.'} && npm install && npm run check && npm start\n`)
  return 0
}

async function writePackageJson(target: string): Promise<string> {
  const file = path.join(target, 'package.json')
  const own = JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8')) as { version: string; devDependencies: Record<string, string> }
  const exists = existsSync(file)
  const pkg: PackageJson = exists ? (JSON.parse(await readFile(file, 'utf8')) as PackageJson) : { name: npmName(path.basename(target)), version: '0.1.0', private: true }
  // Handler modules are ES modules: `import … from 'mcp-edge'` needs "type": "module" for tsc and tsx
  // (under "commonjs", tsx loads hello.ts as CommonJS and `check` fails with a require() cycle).
  // npm 11's `npm init -y` writes "commonjs" into a folder without code: that one is switched.
  if (pkg.type === undefined || (pkg.type === 'commonjs' && !hasCommonJsCode(target, pkg))) {
    if (pkg.type !== undefined) process.stderr.write('mcp-edge init: package.json "type" changed from "commonjs" to "module" (handler modules are ES modules)\n')
    pkg.type = 'module'
  } else if (pkg.type !== 'module') {
    process.stderr.write(`mcp-edge init: package.json has "type": ${JSON.stringify(pkg.type)} and CommonJS code; handler modules need "module": set it, or keep them in a folder with a package.json of its own that says so\n`)
  }
  pkg.scripts = { ...SCRIPTS, ...pkg.scripts }
  pkg.dependencies = { 'mcp-edge': `^${own.version}`, ...pkg.dependencies }
  pkg.devDependencies = {
    typescript: own.devDependencies.typescript ?? 'latest',
    '@types/node': own.devDependencies['@types/node'] ?? 'latest',
    ...pkg.devDependencies,
  }
  await writeFile(file, `${JSON.stringify(pkg, null, 2)}\n`)
  return exists ? 'updated' : 'created'
}

/**
 * A project that installed mcp-edge from a tarball outside its folder (`npm install ../mcp-edge-0.1.0.tgz`
 * writes `file:../mcp-edge-0.1.0.tgz`) cannot build its image: the Docker build context is the folder,
 * and `npm install` in the image cannot reach the tarball. The tarball is copied into the folder and
 * the dependency pointed at the copy (the Dockerfile copies `*.tgz` beside package.json). What it
 * did, for init's output; undefined when nothing was to do.
 */
async function bringTarballIn(target: string): Promise<string | undefined> {
  const file = path.join(target, 'package.json')
  const pkg = JSON.parse(await readFile(file, 'utf8')) as PackageJson
  const spec = pkg.dependencies?.['mcp-edge']
  if (spec === undefined || !spec.startsWith('file:')) return undefined
  const source = path.resolve(target, spec.slice('file:'.length))
  const inside = !path.relative(target, source).startsWith('..') && !path.isAbsolute(path.relative(target, source))
  if (inside) return undefined
  if (!existsSync(source) || !statSync(source).isFile()) {
    process.stderr.write(`mcp-edge init: mcp-edge is installed from ${spec}, outside this folder: a Docker build cannot see it. \`npm pack\` it into this folder and \`npm install ./mcp-edge-<version>.tgz\`\n`)
    return undefined
  }
  const copy = path.basename(source)
  if (!existsSync(path.join(target, copy))) await copyFile(source, path.join(target, copy))
  pkg.dependencies!['mcp-edge'] = `file:${copy}`
  await writeFile(file, `${JSON.stringify(pkg, null, 2)}\n`)
  return `copied   ${copy} (mcp-edge's tarball, into the Docker build context; package.json points at it: run npm install)\n`
}

/** True when the project has CommonJS code of its own: its `main` file, or a `.js`/`.cjs` file at its top. */
function hasCommonJsCode(target: string, pkg: PackageJson): boolean {
  if (typeof pkg.main === 'string' && existsSync(path.join(target, pkg.main))) return true
  return readdirSync(target).some((name) => name.endsWith('.js') || name.endsWith('.cjs'))
}

/** A valid npm package name from a folder name. */
function npmName(folder: string): string {
  const name = folder.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '')
  return name === '' ? 'mcp-gateway' : name
}
