/**
 * The text of an answer (wire/message-text.ts): a result passed on unread (VerbatimResult) is spliced
 * in behind the answer's own id, and anything that serialises it otherwise gets its value.
 */
import t from 'tap'
import { messageText, VerbatimResult } from '../../gateway/wire/message-text.ts'
import { resultMessage } from '../../gateway/wire/jsonrpc.ts'
import type { JsonObject } from '../../gateway/wire/mcp-types.ts'

t.test('a VerbatimResult goes out as its text, behind the answer\'s id; JSON.stringify reads its value', async (t) => {
  const text = '{ "content":[{"type":"text","text":"x"}], "id":"inner" }'
  const result = new VerbatimResult(text) as unknown as JsonObject
  t.equal(messageText(resultMessage('a"b', result)), `{"jsonrpc":"2.0","id":"a\\"b","result":${text}}`, 'the id escaped, the text as it is')
  t.equal(JSON.stringify(resultMessage(7, result)), '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"id":"inner"}}', 'serialised elsewhere: its value')
  t.same(Object.keys(result), [], 'no members to read')
  t.throws(() => Object.assign(result, { isError: true }), TypeError, 'frozen: a change throws rather than being lost')
  t.equal(messageText({ ...resultMessage(8, result), extra: 1 } as never), '{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"x"}],"id":"inner"},"extra":1}', 'not the three members of an answer: serialised in full')
})
