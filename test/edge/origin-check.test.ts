// DNS-rebinding protection: which Host and Origin headers an OriginPolicy lets through.
import t from 'tap'
import { hasDuplicateHost, OriginPolicy } from '../../gateway/edge/origin-check.ts'

const loopbackOnly = new OriginPolicy([])

t.test('loopback Host names pass with and without a port', async (t) => {
  for (const host of ['localhost', 'localhost:8080', '127.0.0.1', '127.0.0.1:80', '[::1]', '[::1]:8080', '[::1]:0']) {
    t.ok(loopbackOnly.allows(host, undefined), host)
  }
})

t.test('anything else in Host is refused when nothing is listed', async (t) => {
  for (const host of [
    'evil.example',
    'evil.example:8080',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
    '127.0.0.2',
    '0.0.0.0',
    '[::2]:8080',
    '[::ffff:127.0.0.1]',
    '',
  ]) {
    t.notOk(loopbackOnly.allows(host, undefined), JSON.stringify(host))
  }
})

t.test('a missing Host is refused, whatever the Origin', async (t) => {
  t.notOk(loopbackOnly.allows(undefined, undefined))
  t.notOk(loopbackOnly.allows(undefined, 'http://localhost:3000'))
})

t.test('Origin: loopback origins pass, `null` and foreign origins do not', async (t) => {
  for (const origin of ['http://localhost', 'http://localhost:3000', 'https://127.0.0.1:8443', 'http://[::1]:8080', 'http://[::1]']) {
    t.ok(loopbackOnly.allows('localhost:8080', origin), origin)
  }
  for (const origin of ['null', 'http://evil.example', 'https://evil.example:443', 'http://localhost.evil.example', 'localhost', '']) {
    t.notOk(loopbackOnly.allows('localhost:8080', origin), JSON.stringify(origin))
  }
  t.notOk(loopbackOnly.allows('evil.example', 'http://localhost'), 'a loopback Origin does not excuse a foreign Host')
})

t.test('an entry with scheme and port allows exactly that origin', async (t) => {
  const policy = new OriginPolicy(['https://app.example.com:8443'])
  t.ok(policy.allows('app.example.com:8443', 'https://app.example.com:8443'))
  t.notOk(policy.allows('app.example.com:8443', 'http://app.example.com:8443'), 'another scheme')
  t.notOk(policy.allows('app.example.com:8443', 'https://app.example.com:9443'), 'another port')
  t.notOk(policy.allows('app.example.com:8443', 'https://app.example.com'), 'no port')
  t.notOk(policy.allows('app.example.com', undefined), 'Host without the listed port')
  t.notOk(policy.allows('app.example.com:9443', undefined), 'Host with another port')
  t.notOk(policy.allows('other.example.com:8443', 'https://other.example.com:8443'), 'another host')
  t.notOk(policy.allows('sub.app.example.com:8443', undefined), 'a subdomain is another host')
})

t.test('an entry with a scheme and no port allows any port of that scheme', async (t) => {
  const policy = new OriginPolicy(['https://app.example.com/'])
  t.ok(policy.allows('app.example.com', 'https://app.example.com'), 'the trailing slash of the entry is ignored')
  t.ok(policy.allows('app.example.com:8443', 'https://app.example.com:8443'))
  t.notOk(policy.allows('app.example.com', 'http://app.example.com'), 'http is not https')
})

t.test('a host:port entry allows that port under any scheme', async (t) => {
  const policy = new OriginPolicy(['gateway.internal:8080'])
  t.ok(policy.allows('gateway.internal:8080', undefined))
  t.ok(policy.allows('gateway.internal:8080', 'http://gateway.internal:8080'))
  t.ok(policy.allows('gateway.internal:8080', 'https://gateway.internal:8080'))
  t.notOk(policy.allows('gateway.internal', undefined))
  t.notOk(policy.allows('gateway.internal:8081', undefined))
})

t.test('a host-only entry allows that host on any port and scheme', async (t) => {
  const policy = new OriginPolicy(['gateway.internal'])
  t.ok(policy.allows('gateway.internal', undefined))
  t.ok(policy.allows('gateway.internal:8080', 'http://gateway.internal:8080'))
  t.ok(policy.allows('gateway.internal', 'https://gateway.internal'))
  t.notOk(policy.allows('gateway.internal.evil.example', undefined))
  t.notOk(policy.allows('gateway.internal', 'https://evil.example'), 'an allowed Host does not excuse a foreign Origin')
  t.ok(policy.allows('localhost', undefined), 'loopback stays allowed beside listed entries')
})

t.test('IPv6 entries keep their brackets apart from the port', async (t) => {
  const policy = new OriginPolicy(['[2001:db8::1]:8080', 'http://[2001:db8::2]'])
  t.ok(policy.allows('[2001:db8::1]:8080', 'http://[2001:db8::1]:8080'))
  t.notOk(policy.allows('[2001:db8::1]:9090', undefined))
  t.notOk(policy.allows('[2001:db8::1]', undefined))
  t.ok(policy.allows('[2001:db8::2]:3000', 'http://[2001:db8::2]:3000'))
  t.notOk(policy.allows('[2001:db8::3]', undefined))
})

t.test('comparisons ignore case in host names and schemes', async (t) => {
  const policy = new OriginPolicy(['HTTPS://App.Example.COM:8443'])
  t.ok(policy.allows('app.example.com:8443', 'https://app.example.com:8443'))
  t.ok(policy.allows('APP.EXAMPLE.COM:8443', 'HTTPS://APP.example.com:8443'))
  t.ok(loopbackOnly.allows('LocalHost:8080', 'HTTP://LOCALHOST:3000'))
  t.notOk(policy.allows('app.example.com:8443', 'HTTP://app.example.com:8443'), 'case folding does not make http https')
})

t.test('verdicts are cached per header value without mixing them up', async (t) => {
  const policy = new OriginPolicy(['good.example'])
  for (let round = 0; round < 3; round++) {
    t.ok(policy.allows('good.example', 'http://good.example'), `round ${round}: allowed stays allowed`)
    t.notOk(policy.allows('evil.example', undefined), `round ${round}: refused stays refused`)
    t.notOk(policy.allows('good.example', 'http://evil.example'), `round ${round}: the Host verdict does not carry over to Origin`)
  }
  // More distinct values than the cache holds: the cache is reset, not trusted blindly.
  for (let n = 0; n < 1500; n++) policy.allows(`h${n}.example`, undefined)
  t.ok(policy.allows('good.example', 'http://good.example'))
  t.notOk(policy.allows('evil.example', undefined))
})

t.test('default ports: browsers leave them out of Origin', async (t) => {
  const policy = new OriginPolicy(['https://app.example.com:443', 'http://plain.example.com:80'])
  t.ok(policy.allows('app.example.com', 'https://app.example.com'), 'https origin without :443')
  t.ok(policy.allows('app.example.com:443', 'https://app.example.com:443'))
  t.ok(policy.allows('plain.example.com', 'http://plain.example.com'), 'http origin without :80')
  t.notOk(policy.allows('app.example.com', 'https://app.example.com:8443'), 'another port is refused')
})

t.test('a second Host header is seen whatever its spelling; other four-letter names are not Host', async (t) => {
  t.equal(hasDuplicateHost(['Host', 'a.example', 'Accept', '*/*']), false, 'one Host')
  t.equal(hasDuplicateHost(['Host', 'localhost', 'host', 'evil.example']), true, 'Host and host')
  t.equal(hasDuplicateHost(['HOST', 'localhost', 'hOsT', 'evil.example']), true, 'HOST and hOsT')
  t.equal(hasDuplicateHost(['Host', 'localhost', 'Hose', 'x', 'hist', 'y']), false, 'Hose and hist are other headers')
})
