// The folder tree is the architecture: imports flow one way, and nothing imports in a circle.
// Reads only the import lines of gateway/ (no TypeScript program, no dependency): quick, and it
// fails on the change that breaks the rule, naming the files.
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const GATEWAY = resolve(dirname(fileURLToPath(import.meta.url)), '../../gateway')

/** Every `from '…'` / `import '…'` / `import('…')` specifier that names a gateway file, type imports included. */
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** file (relative to gateway/) → the gateway files it imports (relative to gateway/). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sources(GATEWAY)) {
    const text = readFileSync(file, 'utf8')
    const targets: string[] = []
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]
      if (specifier === undefined || !specifier.startsWith('.') || !specifier.endsWith('.ts')) continue
      targets.push(relative(GATEWAY, resolve(dirname(file), specifier)))
    }
    graph.set(relative(GATEWAY, file), targets)
  }
  return graph
}

/** The circles of `graph`, each as the path that closes it (Tarjan would give components; a path reads better). */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string): void => {
    state.set(file, 'open')
    stack.push(file)
    for (const target of graph.get(file) ?? []) {
      const seen = state.get(target)
      if (seen === 'open') found.push([...stack.slice(stack.indexOf(target)), target])
      else if (seen === undefined && graph.has(target)) visit(target)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file)
  return found
}

const graph = importGraph()

t.test('the graph is read: gateway files and their imports', async (t) => {
  t.ok(graph.size > 50, `${graph.size} files`)
  t.ok(graph.get('index.ts')!.length > 0, 'index.ts imports something')
  const missing = [...graph].flatMap(([file, targets]) => targets.filter((target) => !graph.has(target)).map((target) => `${file} → ${target}`))
  t.same(missing, [], 'every imported gateway file is one the graph read')
})

t.test('no import circle in gateway/', async (t) => {
  t.same(circles(graph).map((path) => path.join(' → ')), [])
})

/** Folder → folders it must never import (the layers below import nothing above them). */
const FORBIDDEN: Record<string, string[]> = {
  'wire/': ['*'],
  'store/': ['protocol/', 'registry/', 'transport/', 'server/', 'edge/', 'client/', 'config/load'],
  'config/': ['protocol/', 'registry/', 'transport/', 'server/', 'store/', 'edge/', 'client/'],
  'registry/': ['protocol/', 'transport/', 'server/', 'store/', 'edge/'],
  'protocol/': ['transport/', 'server/', 'edge/', 'fastify'],
  // Tasks sit under the protocol: they run registry callbacks and keep records in the store.
  'tasks/': ['protocol/', 'transport/', 'server/', 'edge/', 'client/'],
  // The client shares the wire shapes, and the registry's descriptors (what a list returns).
  'client/': ['protocol/', 'transport/', 'server/', 'store/', 'edge/', 'config/'],
  'transport/': ['server/'],
}

/** The imports of `graph` that FORBIDDEN forbids, as `file → target`. */
function upward(graph: Map<string, string[]>): string[] {
  const wrong: string[] = []
  for (const [file, targets] of graph) {
    for (const [folder, forbidden] of Object.entries(FORBIDDEN)) {
      if (!file.startsWith(folder)) continue
      for (const target of targets) {
        if (target.startsWith(folder)) continue
        if (forbidden.includes('*') || forbidden.some((prefix) => target.startsWith(prefix))) wrong.push(`${file} → ${target}`)
      }
    }
  }
  return wrong
}

t.test('imports flow down the layers', async (t) => {
  t.same(upward(graph), [], 'no upward import')
  const fastify = [...graph.keys()].filter((file) => file.startsWith('protocol/') && /from ['"]fastify['"]/.test(readFileSync(join(GATEWAY, file), 'utf8')))
  t.same(fastify, [], 'protocol/ does not import Fastify')
})

t.test('the check itself finds a circle and an upward import', async (t) => {
  t.same(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']]])), [['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  t.same(circles(new Map([['a.ts', ['b.ts']], ['b.ts', []]])), [])
  t.same(upward(new Map([['store/store.ts', ['protocol/x.ts', 'wire/y.ts']], ['wire/y.ts', ['store/store.ts']]])), ['store/store.ts → protocol/x.ts', 'wire/y.ts → store/store.ts'])
  const text = "import type { X } from '../protocol/x.ts'\nexport { y } from './y.ts'\nimport './side.ts'\nconst m = await import('./lazy.ts')"
  t.same([...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3]), ['../protocol/x.ts', './y.ts', './side.ts', './lazy.ts'])
})
