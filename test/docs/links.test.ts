/**
 * Every relative link in README.md and docs/**\/*.md leads somewhere: the file exists, and a
 * `#anchor` names a heading of that file as GitHub makes its id (issue 32: the README became a
 * front page over guides in docs/, and a guide moved or a heading renamed must not leave a dead
 * link behind), and, since the package ships README.md and docs/, to a file `npm pack` ships too.
 * Links are read with marked's lexer, so code blocks and inline code never count.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import GithubSlugger from 'github-slugger'
import { Lexer, type Token, type Tokens } from 'marked'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

function markdownFiles(): string[] {
  const found = ['README.md']
  const walk = (dir: string): void => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const relative = `${dir}/${name}`
      if (statSync(path.join(ROOT, relative)).isDirectory()) walk(relative)
      else if (name.endsWith('.md')) found.push(relative)
    }
  }
  walk('docs')
  return found
}

/** Every link and image target of a document, code excluded. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = []
  const visit = (tokens: readonly Token[]): void => {
    for (const token of tokens) {
      if (token.type === 'link' || token.type === 'image') targets.push((token as Tokens.Link | Tokens.Image).href)
      const nested = token as { tokens?: Token[]; items?: Token[]; header?: { tokens: Token[] }[]; rows?: { tokens: Token[] }[][] }
      if (nested.tokens) visit(nested.tokens)
      if (nested.items) visit(nested.items)
      if (nested.header) for (const cell of nested.header) visit(cell.tokens)
      if (nested.rows) for (const row of nested.rows) for (const cell of row) visit(cell.tokens)
    }
  }
  visit(Lexer.lex(markdown, { gfm: true }))
  return targets
}

const anchorCache = new Map<string, Set<string>>()
/** The ids GitHub gives a document's headings (duplicates numbered as GitHub numbers them). */
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file)
  if (anchors) return anchors
  const slugger = new GithubSlugger()
  anchors = new Set()
  const visit = (tokens: readonly Token[]): void => {
    for (const token of tokens) {
      if (token.type === 'heading') anchors!.add(slugger.slug(plainText((token as Tokens.Heading).tokens)))
      const nested = token as { tokens?: Token[]; items?: Token[] }
      if (token.type !== 'heading' && nested.tokens) visit(nested.tokens)
      if (nested.items) visit(nested.items)
    }
  }
  visit(Lexer.lex(readFileSync(path.join(ROOT, file), 'utf8'), { gfm: true }))
  anchorCache.set(file, anchors)
  return anchors
}

/** A heading's text as GitHub slugs it: markup gone, code spans and link texts kept. */
function plainText(tokens: readonly Token[]): string {
  return tokens.map((token) => {
    const nested = token as { tokens?: Token[]; text?: string }
    if (nested.tokens) return plainText(nested.tokens)
    if (token.type === 'codespan') return (token as Tokens.Codespan).text.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'")
    return nested.text ?? ''
  }).join('')
}

/** What `npm pack` ships (package.json "files"): the package's README and docs link only to these. */
const SHIPPED = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files
const shipped = (file: string): boolean => file === 'package.json' || SHIPPED.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry))

const files = markdownFiles()
t.ok(files.length >= 10, `README.md and the guides are found (${files.length} files)`)

t.test('anchors follow GitHub: the slug of a heading with code and punctuation', async (t) => {
  const slugger = new GithubSlugger()
  const heading = Lexer.lex('## Per-user OAuth to remote MCP servers (`auth: {oauth: {...}}`)\n')[0] as Tokens.Heading
  t.equal(slugger.slug(plainText(heading.tokens)), 'per-user-oauth-to-remote-mcp-servers-auth-oauth-')
})

for (const file of files) {
  t.test(file, async (t) => {
    const targets = linkTargets(readFileSync(path.join(ROOT, file), 'utf8'))
    let checked = 0
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue // https:, mailto: …
      const [pathPart = '', anchor] = target.split('#', 2)
      const resolved = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(pathPart)))
      checked++
      if (resolved.startsWith('..') || !existsSync(path.join(ROOT, resolved))) {
        t.fail(`${target}: ${resolved} does not exist`)
        continue
      }
      t.ok(shipped(resolved), `${target}: ${resolved} is in the package too (package.json "files"), so the installed README has no dead link`)
      if (anchor !== undefined && anchor !== '') {
        if (!resolved.endsWith('.md')) t.fail(`${target}: an anchor into a file that is not markdown`)
        else t.ok(anchorsOf(resolved).has(anchor), `${target}: ${resolved} has a heading #${anchor}`)
      }
    }
    t.pass(`${checked} relative links checked`)
  })
}
