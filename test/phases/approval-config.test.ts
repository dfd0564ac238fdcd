// The approval block as config (defaults, a block that gates nothing, refused values) and the ask's
// bounds: what the user is shown and how an answer reads.
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { askMessage, shownArguments, verdictOf } from '../../gateway/phases/approval-ask.ts'

const route = (approval: object) => ({ location: '/r', handler: 'handlers/echo.ts', server: { name: 'r', version: '1' }, approval })

t.test('defaults, and a block that gates nothing is dropped', async (t) => {
  const config = configFromObject({ routes: [route({ tools: ['delete_*'] }), route({ destructive: false })].map((r, i) => ({ ...r, location: `/r${i}` })) }, '<test>')
  t.same(config.routes[0]!.approval, { tools: ['delete_*'], destructive: false, ttl_s: 120, fallback: 'refuse', max_shown_chars: 2000 })
  t.equal(config.routes[1]!.approval, undefined, 'no tools and destructive false: no gate')
  t.equal(configFromObject({ routes: [{ ...route({}), approval: undefined }] }, '<test>').routes[0]!.approval, undefined, 'no block: no gate')
})

t.test('values out of their range are refused at load, naming the key', async (t) => {
  for (const [approval, key] of [
    [{ destructive: true, fallback: 'ask-later' }, /routes\[0\]\.approval\.fallback: must be one of "refuse", "allow"/],
    [{ destructive: true, ttl_s: 0 }, /routes\[0\]\.approval\.ttl_s/],
    [{ destructive: true, ttl_s: 7200 }, /routes\[0\]\.approval\.ttl_s/],
    [{ destructive: true, max_shown_chars: 10 }, /routes\[0\]\.approval\.max_shown_chars/],
    [{ tools: [''] }, /routes\[0\]\.approval\.tools\[0\]: must not be empty/],
    [{ destructive: true, ask: true }, /routes\[0\]\.approval: unknown key "ask"/],
  ] as const) {
    t.throws(() => configFromObject({ routes: [route(approval)] }, '<test>'), key, JSON.stringify(approval))
  }
})

t.test('the ask shows bounded arguments and reads answers strictly', async (t) => {
  t.equal(shownArguments({ path: '/a' }, 100), '{"path":"/a"}')
  const cut = shownArguments({ blob: 'x'.repeat(10_000) }, 64)
  t.ok(cut.startsWith('{"blob":"xxx') && cut.length < 120, 'cut at the bound')
  t.match(cut, /… \(9947 more characters not shown\)$/)
  const circular: Record<string, unknown> = {}
  circular.self = circular
  t.match(shownArguments(circular, 100), /cannot be shown/, 'arguments that are not JSON do not throw')
  t.match(askMessage({ id: 'id1', tool: 'rm', route: '/r', principal: undefined, client: undefined, arguments: undefined, maxShownChars: 100 }), /Asked by: an unauthenticated caller\n/)
  t.equal(verdictOf({ action: 'accept', content: { approve: true } }), 'approved')
  t.equal(verdictOf({ action: 'accept', content: { approve: 'true' } }), 'declined', 'only the boolean true approves')
  t.equal(verdictOf({ action: 'accept' }), 'declined')
  t.equal(verdictOf({ action: 'decline' }), 'declined')
  t.equal(verdictOf({ action: 'cancel' }), 'cancelled')
})
