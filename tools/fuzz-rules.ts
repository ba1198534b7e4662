/**
 * @module tools/fuzz-rules
 * Generators of rules documents for property tests and `npm run fuzz`: valid documents that
 * use every feature, the same with one field mutated, and arbitrary JSON. Imports nothing but
 * fast-check, so workerd tests and Node tools share it.
 */
import fc from 'fast-check'

/** Arbitrary JSON, nested at most `maxDepth` levels. */
export const anyJson = (maxDepth = 10): fc.Arbitrary<unknown> => fc.jsonValue({ maxDepth })

const durations = fc.constantFrom('500ms', '1s', '10s', '1m', '1h', '1d', 1, 30, 0.5)
// The fuzz run's requests wait in shapers and queues: keep those waits short.
const shortWaits = fc.constantFrom('20ms', '50ms', '100ms', 0.05)
// At least 5, so that any generated `cost` fits.
const smallLimit = fc.integer({ min: 5, max: 20 })
const paths = fc.constantFrom('/api/*', '/login', '/*', '/a/*/b', '/café/*', '/x%20y', '/')
const keyPart = fc.constantFrom(
  'ip',
  'path',
  'method',
  'host',
  'cf:country',
  'cf:asn',
  'header:x-api-key',
  'header:x-user',
  'query:api_key'
)

const match = fc.record(
  {
    path: fc.oneof(paths, fc.uniqueArray(paths, { minLength: 1, maxLength: 3 })),
    methods: fc.uniqueArray(fc.constantFrom('GET', 'POST', 'put', 'DELETE', 'HEAD', 'PATCH'), {
      minLength: 1,
      maxLength: 3,
    }),
    host: fc.constantFrom('example.com', '*.example.com', ['a.test', 'B.test']),
  },
  { requiredKeys: [] }
)

/** Fields every algorithm accepts. */
const common = fc.record(
  {
    description: fc.string({ maxLength: 20 }),
    match,
    failMode: fc.constantFrom('open', 'closed'),
    cost: fc.oneof(
      fc.integer({ min: 1, max: 5 }),
      fc.record({ header: fc.constant('x-cost'), max: fc.integer({ min: 1, max: 50 }) })
    ),
    penalty: durations,
    shadow: fc.boolean(),
    tiers: fc.record({
      from: fc.constantFrom('header:x-plan', 'claim:plan'),
      limits: fc.dictionary(fc.constantFrom('free', 'paid', 'enterprise'), smallLimit, {
        minKeys: 1,
      }),
    }),
  },
  { requiredKeys: [] }
)

const algorithmFields = fc.oneof(
  fc.record({
    algorithm: fc.constantFrom('sliding-window', 'fixed-window', 'sliding-log'),
    limit: smallLimit,
    period: durations,
  }),
  fc.record(
    {
      algorithm: fc.constantFrom('token-bucket', 'gcra'),
      limit: smallLimit,
      period: durations,
      burst: smallLimit,
    },
    { requiredKeys: ['algorithm', 'limit', 'period'] }
  ),
  fc.record({ algorithm: fc.constant('leaky-bucket'), limit: smallLimit, period: durations }),
  fc.record({
    algorithm: fc.constant('leaky-bucket'),
    limit: smallLimit,
    period: durations,
    mode: fc.constant('shape'),
    maxWait: shortWaits,
  }),
  // Both fields are always set: without them a concurrency rule is refused or leased for 16.7 h
  // (issue 8, "Must fix" 1, fixed elsewhere).
  fc.record({
    algorithm: fc.constant('concurrency'),
    limit: smallLimit,
    queue: fc.integer({ min: 0, max: 3 }),
    maxWait: shortWaits,
    lease: fc.constantFrom('10s', '1m'),
  })
)

/** What a rule does with responses and with requests over its limit (added where it fits). */
const actions = fc.record(
  {
    countOn: fc.record(
      {
        status: fc.constantFrom([401], [401, 403], ['5xx'], ['400-499', 429]),
        header: fc.constant('x-ratelimit-cost'),
      },
      { requiredKeys: ['status'] }
    ),
    maxInFlight: fc.integer({ min: 1, max: 3 }),
    degrade: fc.boolean(),
  },
  { requiredKeys: [] }
)

const COUNTS_RESPONSES = ['sliding-window', 'fixed-window', 'token-bucket', 'gcra', 'sliding-log']

/** The rule with `countOn` and `action: "degrade"` where the rule can take them. */
function withActions(
  rule: Record<string, unknown>,
  extra: { countOn?: unknown; maxInFlight?: number; degrade?: boolean }
): Record<string, unknown> {
  const out = { ...rule }
  if (extra.countOn && COUNTS_RESPONSES.includes(String(rule.algorithm))) {
    out.countOn = extra.countOn
    if (extra.maxInFlight !== undefined) out.maxInFlight = extra.maxInFlight
  }
  if (extra.degrade && rule.algorithm !== 'concurrency' && rule.shadow !== true) {
    out.action = 'degrade'
    out.degradeHeader = true
  }
  return out
}

/**
 * One valid rule with the given id. No `replaces`: what it may drop is being changed (issue 8,
 * "Must fix" 2), and a rule that replaces another needs that other's id.
 */
const rule = (id: string) =>
  fc
    .tuple(common, algorithmFields, fc.uniqueArray(keyPart, { maxLength: 3 }), actions)
    .map(([fields, algorithm, key, extra]) =>
      withActions({ id, ...fields, ...algorithm, key }, extra)
    )

const lists = fc.record(
  {
    allow: fc.record(
      { ips: fc.constant(['192.0.2.0/24', '2001:db8::/32']), countries: fc.constant(['nz']) },
      { requiredKeys: [] }
    ),
    deny: fc.record(
      { ips: fc.constant(['198.51.100.7']), asns: fc.constant([64500]) },
      { requiredKeys: [] }
    ),
  },
  { requiredKeys: [] }
)

const domains = fc.constant([
  {
    domain: 'messaging',
    descriptors: [
      {
        key: 'message_type',
        value: 'marketing',
        descriptors: [{ key: 'to_number', rate_limit: { unit: 'day', requests_per_unit: 5 } }],
      },
      { key: 'to_number', rate_limit: { unit: 'second', requests_per_unit: 3 } },
    ],
  },
])

/**
 * A valid rules document: 1-4 rules of any algorithm with every optional feature, and optional
 * document-level settings. `claim:` tiers need `jwt`, so it is always present (an HS256 secret
 * named `JWT_SECRET`).
 */
export const validDocument: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc
      .integer({ min: 1, max: 4 })
      .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => rule(`r${i}`)))),
    fc.record(
      {
        mode: fc.constantFrom('enforce', 'shadow', 'off'),
        shadowHeaders: fc.boolean(),
        lists,
        domains,
      },
      { requiredKeys: [] }
    )
  )
  .map(([rules, settings]) => ({
    version: 1,
    ...settings,
    jwt: { alg: 'HS256', secret: 'env:JWT_SECRET' },
    rules,
  }))

/** Every path into a JSON value: object keys and array indexes, outermost first. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix]
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...pathsOf(item, [...prefix, i])))
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) out.push(...pathsOf(item, [...prefix, key]))
  return out
}

type Mutation = 'replace' | 'delete' | 'add-field' | 'wrap'

/** A deep copy of `document` with the value at `path` changed by `mutation`. */
function mutate(
  document: unknown,
  path: (string | number)[],
  mutation: Mutation,
  replacement: unknown
): unknown {
  const copy = structuredClone(document)
  if (path.length === 0) return mutation === 'wrap' ? [copy] : replacement
  let parent = copy as Record<string | number, unknown>
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>
  const last = path.at(-1)!
  const target = parent[last]
  if (mutation === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1)
    else delete parent[last]
  } else if (mutation === 'wrap') {
    parent[last] = [target]
  } else if (mutation === 'add-field' && typeof target === 'object' && target !== null) {
    ;(target as Record<string, unknown>).unexpected = replacement
  } else {
    parent[last] = replacement
  }
  return copy
}

/**
 * A valid document with one field mutated: replaced by arbitrary JSON (shallow, or a value of
 * the wrong kind such as a number for a string), deleted, wrapped in a list, or an unknown field
 * added beside it. Some mutations leave it valid; most do not.
 */
export const mutatedDocument: fc.Arbitrary<unknown> = validDocument.chain((document) =>
  fc
    .tuple(
      fc.constantFrom(...pathsOf(document)),
      fc.constantFrom<Mutation>('replace', 'replace', 'delete', 'add-field', 'wrap'),
      fc.oneof(
        anyJson(3),
        fc.constantFrom(0, -1, 1.5, 1e308, 2 ** 53, '', 'x', '1x', '60s', null, true, [], {}),
        fc.string({ unit: 'binary', maxLength: 20 })
      )
    )
    .map(([path, mutation, replacement]) => mutate(document, path, mutation, replacement))
)
