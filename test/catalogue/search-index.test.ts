/**
 * The search index on its own: names split into words (snake, kebab and camel case), plural and verb
 * endings and common words left out, the name weighing most; one index per distinct list, shared by
 * callers who see the same list, rebuilt when the list changes, and at most `indexes` kept.
 */
import t from 'tap'
import { SearchIndex, SearchIndexes } from '../../gateway/catalogue/search-index.ts'
import type { JsonObject } from '../../gateway/wire/mcp-types.ts'

const tool = (name: string, description = '', title?: string): JsonObject => ({ name, description, ...(title === undefined ? {} : { title }), inputSchema: { type: 'object' } })
const names = (index: SearchIndex, query: string, limit = 3): string[] => index.search(query, limit).map((hit) => String(hit.tool.name))

t.test('words of names, titles and descriptions', async (t) => {
  const index = new SearchIndex([
    tool('read_text_file', 'Read the complete contents of a file as text.'),
    tool('createEntities', 'Create multiple new entities in the knowledge graph'),
    tool('get-tiny-image', 'Returns a tiny MCP logo image.'),
    tool('list_directory', 'Get a detailed listing of all files and directories in a path.'),
    tool('deploy', 'Ships a version of a service', 'Deploy a service'),
  ])
  t.equal(names(index, 'entities')[0], 'createEntities', 'camel case split')
  t.equal(names(index, 'tiny image')[0], 'get-tiny-image', 'kebab case split')
  t.equal(names(index, 'read files')[0], 'read_text_file', 'plural and snake case')
  t.equal(names(index, 'listing directories')[0], 'list_directory', 'verb and plural endings')
  t.equal(names(index, 'deploy')[0], 'deploy', 'title and name')
  t.same(names(index, 'the of to'), [], 'common words alone match nothing')
  t.equal(index.search('file', 1).length, 1, 'limit')
})

t.test('validators: the input schema compiled once; a schema that does not compile is an Error', async (t) => {
  const index = new SearchIndex([
    { name: 'typed', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
    { name: 'broken', inputSchema: { type: 'object', properties: { n: { type: 'nonsense' } } } },
  ])
  const typed = index.validator('typed')
  t.type(typed, 'function')
  t.equal(index.validator('typed'), typed, 'compiled once')
  t.ok(typeof typed === 'function' && typed({ n: 1 }) && !typed({ n: 'x' }))
  t.type(index.validator('broken'), Error)
  t.equal(index.validator('missing'), undefined)
})

t.test('one index per distinct list, rebuilt on change, bounded', async (t) => {
  const indexes = new SearchIndexes(4)
  const list = [tool('a_tool', 'first'), tool('b_tool', 'second')]
  const first = indexes.of(list)
  t.equal(indexes.of(list.map((item) => ({ ...item }))), first, 'the same content is the same index (another caller, a new copy of the list)')
  const changed = indexes.of([...list, tool('c_tool', 'third')])
  t.not(changed, first, 'a changed list makes a new index')
  t.same(names(changed, 'third'), ['c_tool'])
  for (let n = 0; n < 10; n++) indexes.of([tool(`t${n}`, `list ${n}`)])
  t.equal(indexes.size, 4, 'search.indexes bounds what is kept')
  t.not(indexes.of(list), first, 'the least recently used was dropped, and is built again when asked')
})
