import t from 'tap'
import { parseEventId } from '../../gateway/store/store.ts'
import { postStreamId, requestIdOf } from '../../gateway/transport/stream-relay.ts'

t.test('a POST stream id names its request, whatever the id, and stays a valid event-id stream', async (t) => {
  for (const id of [0, 7, -3, 1.5, 2 ** 53, '', 'abc', 'with/slash.and.dots', 'n42', 'ünïcødé 🙂']) {
    const stream = postStreamId('pab12z', id)
    t.equal(requestIdOf(stream), id, `request id ${JSON.stringify(id)} round-trips`)
    t.same(parseEventId(`${stream}/3`), { stream, seq: 3 }, `events of the stream for ${JSON.stringify(id)} parse back`)
  }
  t.equal(requestIdOf('pab12z'), undefined, 'a stream without a request (standalone, stateless) names none')
  t.equal(requestIdOf('pab12z.x1'), undefined, 'an unknown encoding names none')
  t.equal(requestIdOf('pab12z.n'), undefined, 'an empty number names none')
})
