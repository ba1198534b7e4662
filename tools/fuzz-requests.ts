/**
 * @module tools/fuzz-requests
 * Generated requests for `npm run fuzz`: methods, paths in odd spellings (escapes, path
 * parameters, control characters, look-alikes of the admin prefix), headers (client addresses
 * valid and not, bearer tokens and JWTs, keys, costs, tiers, huge and odd values), bodies.
 */
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { Request } from 'miniflare'

/** The secrets the fuzzed Worker is started with. */
export const SECRETS = {
  ADMIN_TOKEN: 'fuzz-admin-token',
  DECISION_TOKEN: 'fuzz-decision-token',
  JWT_SECRET: 'fuzz-jwt-secret',
}

/** A request to send; a `bytes` body or `huge` header is built only when sent. */
export interface RequestSpec {
  method: string
  path: string
  headers: [string, string][]
  huge?: number
  body?: string | { bytes: number }
}

/** `arbitrary` in `percent` % of cases, else undefined. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, percent: number) =>
  fc.oneof(
    { weight: 100 - percent, arbitrary: fc.constant(undefined) },
    { weight: percent, arbitrary }
  )

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')

/** An HS256 token with `claims`, signed with `secret`; `alg` may lie. */
function jwt(claims: Record<string, unknown>, secret: string, alg = 'HS256'): string {
  const head = `${base64url(JSON.stringify({ alg, typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`
  return `${head}.${base64url(createHmac('sha256', secret).update(head).digest())}`
}

const FUTURE = 4_102_444_800 // 2100-01-01
const authorization = fc.constantFrom(
  `Bearer ${SECRETS.ADMIN_TOKEN}`,
  `Bearer ${SECRETS.DECISION_TOKEN}`,
  `bearer ${SECRETS.ADMIN_TOKEN}`,
  'Bearer wrong-token',
  'Bearer',
  'Bearer a.b.c',
  `Bearer ${'a'.repeat(5_000)}`,
  'Basic dXNlcjpwYXNz',
  `Bearer ${jwt({ plan: 'paid', exp: FUTURE }, SECRETS.JWT_SECRET)}`,
  `Bearer ${jwt({ plan: 'enterprise', exp: FUTURE }, SECRETS.JWT_SECRET)}`,
  `Bearer ${jwt({ plan: 'enterprise', exp: 1 }, SECRETS.JWT_SECRET)}`,
  `Bearer ${jwt({ plan: 'enterprise', nbf: FUTURE }, SECRETS.JWT_SECRET)}`,
  `Bearer ${jwt({ plan: 'enterprise' }, 'forged')}`,
  `Bearer ${jwt({ plan: 'enterprise' }, '', 'none').replace(/[^.]+$/, '')}`,
  `Bearer ${jwt({ plan: ['x'], exp: 'soon' }, SECRETS.JWT_SECRET)}`
)

const clientAddress = fc.oneof(
  { weight: 6, arbitrary: fc.nat(40).map((n) => `198.51.100.${n}`) },
  { weight: 2, arbitrary: fc.nat(8).map((n) => `2001:db8:0:${n}::${n + 1}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '::ffff:198.51.100.3',
      '192.0.2.5', // allow-listed by generated documents
      '198.51.100.7', // deny-listed
      '',
      ' ',
      'unknown',
      '1.2.3',
      '256.1.1.1',
      '1.2.3.4:80',
      '1.2.3.4, 5.6.7.8',
      '[2001:db8::1]',
      'fe80::1%eth0',
      '::',
      '0.0.0.0',
      '01.02.03.04',
      '0x7f.0.0.1',
      'x'.repeat(300),
      'caf%C3%A9'
    ),
  }
)

const prefixes = fc.constantFrom(
  '/',
  '/api/',
  '/api',
  '/API/x',
  '/login',
  '/Login',
  '/a/x/b',
  '/caf%C3%A9/x',
  '/café/menu',
  '/%2561pi/x',
  '/api;x/y',
  '/__ratelimit',
  '/__ratelimit/rules',
  '/__RATELIMIT/rules',
  '/__ratelimit;x/rules',
  '/__ratelimit%09/rules',
  '/__ratelimit./rules',
  '/__ratelimit/keys/r0/198.51.100.1',
  '/__ratelimit/keys/r1/a/b/c',
  '/__ratelimit/keys/r0/%ZZ',
  '/__ratelimit/explain',
  '/json'
)
const oddPieces = fc.constantFrom(
  ...['', '/', ';jsessionid=1', '%3b', '%00', '%20', '%09', '%0a', '%2F', '%5C', '%2561'],
  ...['/..', '/../..', '/./', '//', '%', '%zz', '%C3%A9', '%FF', '%E2%80%AE', '.json', '*'],
  ...['~', '%7E', 'é', '😀', '\\', '\\..\\', '\u0000', '\u0007', '\t', '\u007f', '\ud800']
)
// The demo origin answers `?status=<code>`: no 5xx, so every 500 seen is the Worker's.
const query = fc.constantFrom(
  '',
  '',
  '?api_key=k1',
  '?api_key=a&api_key=b',
  '?api_key=',
  '?api.key=x',
  '?api+key=x',
  '?api[key=x',
  '?status=204',
  '?status=404',
  '?a=%zz&b=%00'
)
const path = fc
  .tuple(
    prefixes,
    fc.array(fc.oneof(oddPieces, fc.string({ unit: 'binary', maxLength: 12 })), { maxLength: 3 }),
    query,
    sometimes(fc.constantFrom(1_000, 9_000), 2)
  )
  .map(([head, pieces, q, long]) => `${head}${pieces.join('')}${long ? 'x'.repeat(long) : ''}${q}`)

const method = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('PATCH', 'OPTIONS', 'get', 'FOO', 'PROPFIND', 'M-SEARCH'),
  }
)

// Node's fetch sends nothing outside visible ASCII, space and tab in a header value.
const headerValue = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constant(9))
    .map((c) => String.fromCharCode(c)),
  maxLength: 40,
})
const headerName = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,24}$/)
const header = (name: string, value: fc.Arbitrary<string>, percent: number) =>
  sometimes(
    value.map((v): [string, string] => [name, v]),
    percent
  )

const headers = fc
  .tuple(
    header('cf-connecting-ip', clientAddress, 90),
    header('authorization', authorization, 30),
    header('x-api-key', fc.oneof(fc.constantFrom('k1', 'k2', 'junk1', 'a, b'), headerValue), 30),
    header('x_api_key', fc.constantFrom('k1', 'junk'), 5),
    header('x-plan', fc.constantFrom('free', 'paid', 'enterprise', 'platinum', ''), 20),
    header('x-cost', fc.constantFrom('1', '5', '50', '-1', '1e309', 'abc', '', '0', '2.5'), 10),
    header('x-user', headerValue, 10),
    header('x-http-method-override', fc.constantFrom('GET', 'DELETE', 'head', 'x'), 5),
    fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }),
    sometimes(fc.constant(null), 1).map((many) =>
      many === null
        ? Array.from({ length: 200 }, (_, i): [string, string] => [`x-many-${i}`, 'v'])
        : []
    )
  )
  .map((items) => {
    const many = items.pop() as [string, string][]
    const extra = items.pop() as [string, string][]
    const named = items as ([string, string] | undefined)[]
    return [...named.filter((h) => h !== undefined), ...extra, ...many]
  })

const envoyBody = fc
  .record(
    {
      domain: fc.constantFrom('messaging', 'other', ''),
      descriptors: fc.array(
        fc.record({
          entries: fc.array(
            fc.record({
              key: fc.constantFrom('message_type', 'to_number', 'x'),
              value: fc.constantFrom('marketing', '2061234567', '1', ''),
            }),
            { maxLength: 3 }
          ),
          limit: sometimes(
            fc.record({
              requests_per_unit: fc.nat(5),
              unit: fc.constantFrom('SECOND', 'HOUR', 'x'),
            }),
            20
          ),
        }),
        { maxLength: 3 }
      ),
      hitsAddend: fc.oneof(fc.nat(5), fc.constantFrom(-1, 1e20, 'x', 4_294_967_296)),
    },
    { requiredKeys: ['domain', 'descriptors'] }
  )
  .map((body) => JSON.stringify(body))

const body = fc.oneof(
  { weight: 40, arbitrary: fc.constant(undefined) },
  { weight: 30, arbitrary: envoyBody },
  { weight: 30, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 20, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  // Over the 64 KiB of `/json` and the 1 MiB of the admin API.
  { weight: 1, arbitrary: fc.constantFrom(70 * 1024, 1_100_000).map((bytes) => ({ bytes })) }
)

/** One request to send through the Worker. */
export const requestSpec: fc.Arbitrary<RequestSpec> = fc
  .record({
    method,
    path,
    headers,
    body,
    huge: sometimes(fc.constantFrom(8_000, 40_000, 100_000), 1),
  })
  .map(({ method, path, headers, body, huge }) => {
    const spec: RequestSpec = { method, path, headers }
    if (huge !== undefined) spec.huge = huge
    if (body !== undefined && !['GET', 'HEAD', 'get'].includes(method)) spec.body = body
    return spec
  })

/**
 * The spec as a (Miniflare) Request to `origin`, or the reason Node's fetch refuses to build it (a method
 * or header value it will not send). Paths are taken as the URL parser reads them.
 */
export function toRequest(spec: RequestSpec, origin: string): Request | string {
  try {
    const headers: [string, string][] = [...spec.headers]
    if (spec.huge !== undefined) headers.push(['x-huge', 'h'.repeat(spec.huge)])
    const body = typeof spec.body === 'object' ? 'b'.repeat(spec.body.bytes) : spec.body
    return new Request(`${origin}${spec.path}`, { method: spec.method, headers, body })
  } catch (error) {
    return (error as Error).message.split(':')[0] ?? 'refused'
  }
}
