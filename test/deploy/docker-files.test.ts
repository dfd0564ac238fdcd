/**
 * The Docker files, checked without a Docker engine (test/fixtures/docker-context.ts): the root
 * image's base is a Node version CI runs the suite on; its `.dockerignore` keeps node_modules, .git
 * and the CI cache out of the build context (a checkout sent 268 MB) and every `COPY` source in; the
 * `init` project's Dockerfile and `.dockerignore` do the same for a scaffolded project.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { contextFiles, ignored, matching, readDockerfile, readIgnore } from '../fixtures/docker-context.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TEMPLATE = path.join(ROOT, 'templates/init')
/** The Node versions .ci/run tests (NODE22=…, NODE24=…). */
const tested = [...readFileSync(path.join(ROOT, '.ci/run'), 'utf8').matchAll(/^NODE\d+=(\d+\.\d+\.\d+)$/gm)].map((match) => match[1]!)

t.test('CI names the Node versions it tests', async (t) => {
  t.equal(tested.length, 2, `.ci/run pins two versions (${tested.join(', ')})`)
})

for (const [name, dockerfile] of [['the root image', path.join(ROOT, 'Dockerfile')], ["the init project's image", path.join(TEMPLATE, 'Dockerfile')]] as const) {
  t.test(`${name}: based on a Node release CI tests, pinned to the patch`, async (t) => {
    const { from } = readDockerfile(dockerfile)
    t.equal(from.length, 1)
    const version = /^node:(\d+\.\d+\.\d+)-slim$/.exec(from[0]!)?.[1]
    t.ok(version !== undefined, `${from[0]} names an exact version`)
    t.ok(tested.includes(version!), `${version} is one CI tests (${tested.join(', ')})`)
  })
}

t.test('the root build context: every COPY source in, dependencies, history and caches out', async (t) => {
  const rules = readIgnore(path.join(ROOT, '.dockerignore'))
  t.ok(rules.length > 0, 'a root .dockerignore')
  for (const left of ['node_modules/fastify/package.json', 'node_modules', '.git/HEAD', '.ci/cache/node-24.22.3/bin/node', '.tap/processinfo', 'dist/index.js', 'gateway/node_modules/x', 'mcp-edge-0.1.0.tgz']) {
    t.ok(ignored(left, rules), `${left} is left out`)
  }
  const { files, bytes } = contextFiles(ROOT, rules)
  t.ok(bytes < 20 * 1024 * 1024, `the context is ${(bytes / 1024 / 1024).toFixed(1)} MB`)
  const { copies } = readDockerfile(path.join(ROOT, 'Dockerfile'))
  t.ok(copies.length > 0)
  for (const source of copies.flatMap((copy) => copy.sources)) {
    t.ok(matching(source, files).length > 0, `COPY ${source}: in the context`)
  }
  // What the image runs must be there: the gateway's sources, the lock npm ci installs from.
  for (const needed of ['package-lock.json', 'gateway/bin.mjs', 'gateway/cli.ts', 'config/gateway.yaml']) t.ok(files.includes(needed), needed)
})

t.test("the init project's .dockerignore leaves out node_modules and .git, and not its own files", async (t) => {
  const rules = readIgnore(path.join(TEMPLATE, 'dockerignore'))
  for (const left of ['node_modules/mcp-edge/package.json', '.git/HEAD']) t.ok(ignored(left, rules), `${left} is left out`)
  for (const kept of ['package.json', 'package-lock.json', 'config/gateway.yaml', 'handlers/hello.ts', 'mcp-edge-0.1.0.tgz']) t.notOk(ignored(kept, rules), `${kept} is in`)
  const { copies } = readDockerfile(path.join(TEMPLATE, 'Dockerfile'))
  const sources = copies.flatMap((copy) => copy.sources)
  t.ok(sources.some((source) => matching(source, ['mcp-edge-0.1.0.tgz']).length > 0), "a tarball of mcp-edge in the project is copied before npm install")
})
