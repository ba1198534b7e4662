/**
 * @module tools/fuzz-mixes
 * Generated mixes of policies on overlapping paths and keys (reject, degrade, shadow, countOn
 * with maxInFlight, concurrency, leased quotas, penalties) and the traffic to send through them,
 * for the property test of `test/features/policy-mix.test.ts` and `npm run fuzz`. Imports
 * nothing but fast-check, so workerd tests and Node tools share it.
 */
import fc from 'fast-check'

/** The paths of a mix: two plain ones, a login whose wrong passwords answer 401, and a lite one. */
export const MIX_PATHS = ['/a', '/b', '/login', '/lite'] as const

/** The password the demo origin's `POST /login` takes (`src/http/request/demo-origin.ts`). */
export const RIGHT_PASSWORD = 'open-sesame'

/** One request of a mix. */
export interface MixRequest {
  path: (typeof MIX_PATHS)[number]
  ip: string
  user: string
  /** `POST /login` with the right or a wrong password; other paths are GET. */
  password?: 'right' | 'wrong'
}

/** A rules document and the requests to send, in batches sent at once. */
export interface Mix {
  document: { version: 1; rules: Record<string, unknown>[] }
  batches: MixRequest[][]
}

const limit = fc.integer({ min: 1, max: 6 })
/** One window for the whole mix: a day, so a test or a fuzz run never sees one end. */
const PERIOD = '1d'

const counted = fc.oneof(
  fc.record({ algorithm: fc.constantFrom('fixed-window', 'sliding-window'), limit }),
  limit.chain((n) =>
    fc.record({
      algorithm: fc.constantFrom('token-bucket', 'gcra'),
      limit: fc.constant(n),
      burst: fc.constant(n),
    })
  )
)

/** What a rule does, with the fields that make it so. */
const kind = fc.oneof(
  counted.map((fields) => ({ ...fields })),
  counted.map((fields) => ({ ...fields, penalty: '1h' })),
  fc.tuple(counted, fc.boolean()).map(([fields, header]) => ({
    ...fields,
    action: 'degrade',
    ...(header ? { degradeHeader: true } : { degradeTo: '/lite' }),
  })),
  counted.map((fields) => ({ ...fields, shadow: true })),
  fc
    .tuple(limit, fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }))
    .map(([n, inFlight]) => ({
      algorithm: 'fixed-window',
      limit: n,
      countOn: { status: [401] },
      ...(inFlight === undefined ? {} : { maxInFlight: inFlight }),
    })),
  fc.integer({ min: 1, max: 3 }).map((n) => ({
    algorithm: 'concurrency',
    limit: n,
    queue: 0,
    maxWait: '20ms',
    lease: '1m',
  })),
  counted.map((fields) => ({ ...fields, consistency: 'leased' }))
)

const match = fc.option(
  fc.record({
    path: fc.uniqueArray(fc.constantFrom(...MIX_PATHS), { minLength: 1, maxLength: 3 }),
  }),
  { nil: undefined }
)
const key = fc.constantFrom([], ['ip'], ['header:x-user'], ['ip', 'header:x-user'])

/**
 * A mix: 2-5 rules of any kind above on overlapping paths and keys, ids prefixed with `prefix`
 * (so each mix counts in objects of its own), and 1-`maxBatches` batches of 1-`maxBatch`
 * requests from 2 addresses and 2 users.
 *
 * @param prefix - the rule ids' prefix
 * @param maxBatches - the most batches
 * @param maxBatch - the most requests sent at once
 */
export function mixOf(prefix: string, maxBatches = 30, maxBatch = 3): fc.Arbitrary<Mix> {
  const rule = fc.record({ match, key, kind, failMode: fc.constantFrom('open', 'closed') })
  const request = fc.record(
    {
      path: fc.constantFrom(...MIX_PATHS),
      ip: fc.constantFrom('203.0.113.1', '203.0.113.2'),
      user: fc.constantFrom('ann', 'bob'),
      password: fc.constantFrom<'right' | 'wrong'>('right', 'wrong', 'wrong'),
    },
    { requiredKeys: ['path', 'ip', 'user'] }
  )
  return fc
    .record({
      rules: fc.array(rule, { minLength: 2, maxLength: 5 }),
      batches: fc.array(fc.array(request, { minLength: 1, maxLength: maxBatch }), {
        minLength: 1,
        maxLength: maxBatches,
      }),
    })
    .map(({ rules, batches }) => ({
      document: {
        version: 1,
        rules: rules.map(({ match: on, key: parts, kind: fields, failMode }, i) => ({
          id: `${prefix}-r${i}`,
          ...(on ? { match: on } : {}),
          key: parts,
          ...(fields.algorithm === 'concurrency' ? {} : { period: PERIOD }),
          failMode,
          ...degradable(fields, on?.path),
        })),
      },
      batches: batches.map((batch) => batch.map(withoutStrayPassword)),
    }))
}

/** A rule's fields, `degradeTo` made `degradeHeader` where the lite path is in its own match. */
function degradable(fields: Record<string, unknown>, paths: readonly string[] | undefined) {
  if (!('degradeTo' in fields) || (paths && !paths.includes('/lite'))) return fields
  const { degradeTo: _, ...rest } = fields
  return { ...rest, degradeHeader: true }
}

/** Only a login carries a password. */
function withoutStrayPassword({ password, ...rest }: MixRequest): MixRequest {
  return rest.path === '/login' && password ? { ...rest, password } : rest
}

/** A request as plain fields, for any runtime's `Request`. */
export interface MixRequestInit {
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
}

/**
 * The request a mix sends.
 *
 * @param item - the mix's request
 * @param base - the Worker's origin, e.g. `https://example.com`
 */
export function mixRequestInit(item: MixRequest, base: string): MixRequestInit {
  const headers: Record<string, string> = { 'cf-connecting-ip': item.ip, 'x-user': item.user }
  if (item.password)
    headers['x-password'] = item.password === 'right' ? RIGHT_PASSWORD : 'not-the-password'
  return { url: `${base}${item.path}`, method: item.password ? 'POST' : 'GET', headers }
}
