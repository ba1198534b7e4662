/**
 * @module rules/schema
 * The rules document's schema. It checks shapes and single fields; `parse.ts` adds the checks
 * that span fields (duplicate ids) and compiles the result.
 */
import * as v from 'valibot'
import { MAX_SLIDING_LOG_LIMIT } from '../algorithms'
import { CostSchema } from './cost'
import { CountOnSchema, MaxInFlightSchema } from './count-on'
import { ActionSchema, DegradeHeaderSchema, DegradeToSchema } from './degrade'
import { JwtSchema } from './jwt'
import { KeyPartSchema } from './key'
import type { CheckedRule, CheckedRulesDocument, RuleDefinition, RulesDocument } from './document'
import { ListsSchema } from './lists'
import { MessagesSchema } from './messages'
import { patternPath } from './path'
import { JurisdictionSchema, LocationHintSchema } from './placement'
import { TiersSchema } from './tiers'
import {
  duration,
  headerName,
  named,
  objectMessage,
  oneOrMany,
  ruleId,
  show,
  text,
  wholeNumber,
  valueList,
  type Issue,
} from './schema-parts'

export { show } from './schema-parts'

/** The largest `limit` or `burst` a rule may set. */
export const MAX_LIMIT = 1_000_000_000

/** The algorithms a rule may name, for messages. */
const ALGORITHM_LIST =
  '"sliding-window", "token-bucket", "fixed-window", "sliding-log", "gcra", "leaky-bucket", "concurrency"'

/** HTTP methods a rule may match. */
export const METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'CONNECT',
  'TRACE',
]

const pathPattern = v.pipe(
  text('a path pattern'),
  v.startsWith('/', (i: Issue) => `${show(i.input)} must start with "/"`),
  v.regex(
    /^[^?#\s]*$/,
    (i: Issue) =>
      `${show(i.input)} must not contain "?", "#" or spaces (paths are matched without the query)`
  ),
  v.check(
    (pattern) => spellable(pattern),
    (i: Issue) => `${show(i.input)} holds a control character (requests with one are refused)`
  )
)

const hostPattern = v.pipe(
  text('a host pattern'),
  v.regex(/^[A-Za-z0-9.*-]+$/, (i: Issue) => `${show(i.input)} is not a host name or pattern`)
)

const method = v.pipe(
  text('an HTTP method'),
  v.transform((m) => m.toUpperCase()),
  v.picklist(METHODS, (i: Issue) => `${show(i.input)} is not one of ${METHODS.join(', ')}`)
)

const match = v.strictObject(
  {
    path: v.optional(oneOrMany(pathPattern, 'a path pattern')),
    methods: v.optional(
      v.pipe(
        v.array(method, objectMessage('a list of methods')),
        v.minLength(1, 'must not be empty')
      )
    ),
    host: v.optional(oneOrMany(hostPattern, 'a host pattern')),
    headers: v.optional(
      v.record(
        headerName,
        valueList,
        (i: Issue) => `expected an object of header names to values, got ${show(i.input)}`
      )
    ),
    query: v.optional(
      v.record(
        v.pipe(text('a parameter name'), v.minLength(1, 'must not be empty')),
        valueList,
        (i: Issue) => `expected an object of parameter names to values, got ${show(i.input)}`
      )
    ),
    caseSensitive: v.optional(
      v.boolean((i: Issue) => `expected true or false, got ${show(i.input)}`)
    ),
  },
  objectMessage('an object')
)

const common = {
  id: ruleId,
  description: v.optional(text('a string')),
  match: v.optional(match),
  key: v.pipe(
    v.array(KeyPartSchema, (i: Issue) => `expected a list of key parts, got ${show(i.input)}`),
    v.check((parts) => new Set(parts).size === parts.length, 'has a key part twice')
  ),
  limit: wholeNumber(MAX_LIMIT),
  period: duration,
  failMode: v.optional(
    v.picklist(['open', 'closed'], (i: Issue) => `${show(i.input)} is not "open" or "closed"`),
    'open'
  ),
  cost: v.optional(CostSchema),
  consistency: v.optional(
    v.picklist(['exact', 'leased'], (i: Issue) => `${show(i.input)} is not "exact" or "leased"`),
    'exact'
  ),
  penalty: v.optional(duration),
  shadow: v.optional(
    v.boolean((i: Issue) => `expected true or false, got ${show(i.input)}`),
    false
  ),
  tiers: v.optional(TiersSchema),
  showKeys: v.optional(v.boolean((i: Issue) => `expected true or false, got ${show(i.input)}`)),
  nearLimit: v.optional(
    v.pipe(
      v.number((i: Issue) => `expected a fraction of the limit, got ${show(i.input)}`),
      v.check(
        (x) => x > 0 && x < 1,
        (i: Issue) => `${show(i.input)} is not a fraction between 0 and 1 (e.g. 0.8)`
      )
    )
  ),
  replaces: v.optional(
    v.pipe(
      v.array(ruleId, (i: Issue) => `expected a list of rule ids, got ${show(i.input)}`),
      v.minLength(1, 'must not be empty')
    )
  ),
  locationHint: v.optional(LocationHintSchema),
  jurisdiction: v.optional(JurisdictionSchema),
  countOn: v.optional(CountOnSchema),
  maxInFlight: v.optional(MaxInFlightSchema),
  action: v.optional(ActionSchema, 'reject'),
  degradeTo: v.optional(DegradeToSchema),
  degradeHeader: v.optional(DegradeHeaderSchema),
  messages: v.optional(MessagesSchema),
}

// A concurrency limit counts requests in flight, not per period.
const { period: _period, ...withoutPeriod } = common

const algorithm = <N extends string>(name: N) =>
  v.literal(
    name,
    (i: Issue) => `${show(i.input)} is not an algorithm (use one of ${ALGORITHM_LIST})`
  )

/** One rule, as written. */
export const RuleSchema = named<RuleDefinition, CheckedRule>()(
  v.variant(
    'algorithm',
    [
      v.strictObject(
        { ...common, algorithm: algorithm('sliding-window') },
        objectMessage('a rule object')
      ),
      v.strictObject(
        { ...common, algorithm: algorithm('fixed-window') },
        objectMessage('a rule object')
      ),
      v.strictObject(
        {
          ...common,
          algorithm: algorithm('sliding-log'),
          // The log keeps one entry per admitted unit in the window: the limit bounds its size.
          limit: wholeNumber(MAX_SLIDING_LOG_LIMIT),
        },
        objectMessage('a rule object')
      ),
      v.strictObject(
        { ...common, algorithm: algorithm('gcra'), burst: v.optional(wholeNumber(MAX_LIMIT)) },
        objectMessage('a rule object')
      ),
      v.strictObject(
        {
          ...withoutPeriod,
          algorithm: algorithm('concurrency'),
          queue: v.optional(wholeNumber(MAX_LIMIT, 0), 0),
          // Defaults go through the duration pipe like written values, so they are spelled with units.
          maxWait: v.optional(duration, '10s'),
          lease: v.optional(duration, '60s'),
        },
        objectMessage('a rule object')
      ),
      v.strictObject(
        {
          ...common,
          algorithm: algorithm('leaky-bucket'),
          burst: v.optional(wholeNumber(MAX_LIMIT)),
          mode: v.optional(
            v.picklist(
              ['meter', 'shape'],
              (i: Issue) => `${show(i.input)} is not "meter" or "shape"`
            ),
            'meter'
          ),
          maxWait: v.optional(duration),
        },
        objectMessage('a rule object')
      ),
      v.strictObject(
        {
          ...common,
          algorithm: algorithm('token-bucket'),
          burst: v.optional(wholeNumber(MAX_LIMIT)),
        },
        objectMessage('a rule object')
      ),
    ],
    (i: Issue) =>
      i.expected === 'Object'
        ? `expected a rule object, got ${show(i.input)}`
        : i.received === 'undefined'
          ? `is required (use one of ${ALGORITHM_LIST})`
          : `${show(i.input)} is not an algorithm (use one of ${ALGORITHM_LIST})`
  )
)

/** The whole rules document, as written. */
export const RulesDocumentSchema = named<RulesDocument, CheckedRulesDocument>()(
  v.strictObject(
    {
      $schema: v.optional(text('a string')),
      version: v.literal(1, (i: Issue) => `${show(i.input)} is not a supported version (use 1)`),
      mode: v.optional(
        v.picklist(
          ['enforce', 'shadow', 'off'],
          (i: Issue) => `${show(i.input)} is not "enforce", "shadow" or "off"`
        ),
        'enforce'
      ),
      shadowHeaders: v.optional(
        v.boolean((i: Issue) => `expected true or false, got ${show(i.input)}`),
        false
      ),
      lists: v.optional(ListsSchema),
      jwt: v.optional(JwtSchema),
      jurisdiction: v.optional(JurisdictionSchema),
      // Checked by envoyproxy/ratelimit's own rules in `envoy/config.ts`.
      domains: v.optional(
        v.array(
          v.unknown(),
          (i: Issue) => `expected a list of Envoy configurations, got ${show(i.input)}`
        )
      ),
      rules: v.array(RuleSchema, (i: Issue) => `expected a list of rules, got ${show(i.input)}`),
    },
    objectMessage('a rules document object')
  )
)

/**
 * Every field of a rule checked as far as it can be without knowing its algorithm: for a rule
 * whose `algorithm` is missing or unknown, which the schema stops at (it picks the fields to check
 * by the algorithm), so that its other mistakes are reported in the same pass.
 */
const anyAlgorithmRule = v.strictObject(
  {
    ...common,
    algorithm: v.optional(v.unknown()),
    period: v.optional(duration),
    burst: v.optional(wholeNumber(MAX_LIMIT)),
    mode: v.optional(
      v.picklist(['meter', 'shape'], (i: Issue) => `${show(i.input)} is not "meter" or "shape"`)
    ),
    maxWait: v.optional(duration),
    queue: v.optional(wholeNumber(MAX_LIMIT, 0)),
    lease: v.optional(duration),
  },
  objectMessage('a rule object')
)

/**
 * The problems of a rule's fields besides its `algorithm`, for a rule whose algorithm the schema
 * could not pick: paths relative to the rule.
 *
 * @param rule - the rule as written
 */
export function issuesBesidesAlgorithm(rule: unknown): v.BaseIssue<unknown>[] {
  const result = v.safeParse(anyAlgorithmRule, rule)
  return result.success ? [] : result.issues
}

/** Whether a pattern has a normalised spelling (it has none if it holds a control character). */
function spellable(pattern: string): boolean {
  try {
    patternPath(pattern)
    return true
  } catch {
    return false
  }
}
