// The SSE parser: line endings, fields, events split anywhere across chunks, and MCP's priming event.
import t from 'tap'
import { readSse, SseParser, type SseEvent } from '../../gateway/client/index.ts'

const all = (text: string): SseEvent[] => new SseParser().push(text, true)

t.test('fields, multi-line data, comments and line endings', async (t) => {
  t.same(all('data: a\n\n'), [{ event: 'message', data: 'a' }])
  t.same(all('data: one\ndata: two\n\n'), [{ event: 'message', data: 'one\ntwo' }], 'data lines join with LF')
  t.same(all('data:no space\r\n\r\n'), [{ event: 'message', data: 'no space' }], 'CRLF, and no space after the colon')
  t.same(all('data: cr\r\r'), [{ event: 'message', data: 'cr' }], 'CR alone')
  t.same(all(': keepalive\n\nevent: custom\ndata: x\nid: 7\n\n'), [{ event: 'custom', data: 'x', id: '7' }], 'comments are skipped')
  t.same(all('\uFEFFdata: bom\n\n'), [{ event: 'message', data: 'bom' }], 'a leading BOM is dropped')
  t.same(all('data\n\n'), [{ event: 'message', data: '' }], 'a field without a colon has an empty value')
  t.same(all('retry: soon\ndata: x\n\n'), [{ event: 'message', data: 'x' }], 'an invalid retry is ignored')
  t.same(all('id: a\0b\ndata: x\n\n'), [{ event: 'message', data: 'x' }], 'an id with NUL is ignored')
  t.same(all('data: cut off'), [], 'an event the stream cut off is dropped')
})

t.test("MCP's priming event (an id and a retry, empty data) and a bare retry are reported", async (t) => {
  t.same(all('id: s/1\nretry: 1000\ndata: \n\n'), [{ event: 'message', data: '', id: 's/1', retry: 1000 }])
  t.same(all('retry: 250\n\n'), [{ event: 'message', data: '', retry: 250 }], 'what a closing gateway sends')
  t.same(all('\n\n\n'), [], 'blank lines alone dispatch nothing')
})

t.test('events split at every possible point, including inside a CRLF and a UTF-8 character', async (t) => {
  const text = 'id: 1\r\ndata: {"text":"h\u00e9llo \u{1F600}"}\r\n\r\nid: 2\r\nretry: 5\r\ndata: x\r\n\r\n'
  const bytes = new TextEncoder().encode(text)
  const expected = [{ event: 'message', data: '{"text":"h\u00e9llo \u{1F600}"}', id: '1' }, { event: 'message', data: 'x', id: '2', retry: 5 }]
  for (let cut = 1; cut < bytes.length; cut++) {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, cut))
        controller.enqueue(bytes.slice(cut))
        controller.close()
      },
    })
    const events: SseEvent[] = []
    for await (const event of readSse(body)) events.push(event)
    if (JSON.stringify(events) !== JSON.stringify(expected)) t.fail(`split at byte ${cut}: ${JSON.stringify(events)}`)
  }
  t.pass('every split parses the same')
})
