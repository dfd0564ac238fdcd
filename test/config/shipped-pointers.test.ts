/**
 * The shipped configuration files point readers at other files in their comments ("the example
 * handler … (handlers/example.ts)"); each such pointer names a file that exists (issue 26: the
 * default config pointed at a docs/example-handler.md that was never written).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SHIPPED = ['config', 'deploy'].flatMap((dir) =>
  readdirSync(path.join(ROOT, dir)).filter((name) => /\.ya?ml$/.test(name)).map((name) => path.join(ROOT, dir, name)))
/** A relative path to a source, doc or config file, as a comment would write it. */
const POINTER = /(?<![\w/.-])(?:\.{1,2}\/)?[\w-]+(?:\/[\w.-]+)*\.(?:md|ts|ya?ml|conf|json)\b/g
/** A pointer to a section of a document: README "Section title", docs/handlers.md "Section title" (the start of a heading). */
const SECTION = /\b(README|[\w/.-]+\.md) "([^"]+)"/g
const headings = (document: string): string[] =>
  readFileSync(path.join(ROOT, document === 'README' ? 'README.md' : document), 'utf8').split('\n').filter((line) => line.startsWith('#')).map((line) => line.replace(/^#+\s*/, ''))

t.ok(SHIPPED.length >= 3, 'the shipped configuration files are found')
for (const file of SHIPPED) {
  t.test(path.relative(ROOT, file), async (t) => {
    const comments = readFileSync(file, 'utf8').split('\n').map((line) => line.slice(line.indexOf('#') + 1 || line.length))
    const pointers = new Set(comments.flatMap((comment) => comment.match(POINTER) ?? []))
    for (const pointer of pointers) {
      // A pointer reads from the repository's root or from the file's own folder.
      const found = [ROOT, path.dirname(file)].some((base) => existsSync(path.resolve(base, pointer)))
      t.ok(found, `${pointer} exists`)
    }
    for (const [, document, title] of comments.join('\n').matchAll(SECTION)) {
      t.ok(headings(document!).some((heading) => heading.startsWith(title!)), `${document} has a section "${title}"`)
    }
  })
}
