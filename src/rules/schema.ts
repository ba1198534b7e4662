/**
 * @module rules/schema
 * The rules document's schema. It checks shapes and single fields; `parse.ts` adds the checks
 * that span fields (duplicate ids) and compiles the result.
 */
import * as v from 'valibot'
import { parseDuration } from './duration'

/** The largest `limit` or `burst` a rule may set. */
export const MAX_LIMIT = 1_000_000_000

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

/** Key parts that take no argument. */
const FIXED_KEY_PARTS = ['ip', 'path', 'method', 'host', 'cf:country', 'cf:asn']

/** Key parts a rule may combine, for messages; `header:` and `query:` take a name after the colon. */
export const KEY_PARTS = [...FIXED_KEY_PARTS, 'header:<name>', 'query:<name>']

const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** JSON-ish rendering of a value for messages, cut short. */
export function show(input: unknown): string {
  const text = typeof input === 'string' ? JSON.stringify(input) : String(JSON.stringify(input))
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

type Issue = { input: unknown; expected: string | null; received: string; type: string }

/** Messages for object issues: unknown field, missing field, or not an object at all. */
function objectMessage(what: string) {
  return (issue: Issue) => {
    if (issue.expected === 'never') return `unknown field ${issue.received}`
    if (issue.received === 'undefined') return 'is required'
    return `expected ${what}, got ${show(issue.input)}`
  }
}

const text = (what: string) => v.string((i: Issue) => `expected ${what}, got ${show(i.input)}`)

const wholeNumber = (max: number) =>
  v.pipe(
    v.number((i: Issue) => `expected a whole number, got ${show(i.input)}`),
    v.integer((i: Issue) => `${show(i.input)} is not a whole number`),
    v.minValue(1, (i: Issue) => `${show(i.input)} must be at least 1`),
    v.maxValue(max, (i: Issue) => `${show(i.input)} must be at most ${max}`)
  )

const duration = v.pipe(
  v.unknown(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const ms = parseDuration(dataset.value)
    if (ms !== undefined) return ms
    addIssue({
      message: `${show(dataset.value)} is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)`,
    })
    return NEVER
  })
)

const oneOrMany = (item: v.GenericSchema<unknown, string>, what: string) =>
  v.union(
    [item, v.pipe(v.array(item), v.minLength(1, 'must not be empty'))],
    (i: Issue) => `expected ${what} or a list of them, got ${show(i.input)}`
  )

const pathPattern = v.pipe(
  text('a path pattern'),
  v.startsWith('/', (i: Issue) => `${show(i.input)} must start with "/"`),
  v.regex(
    /^[^?#\s]*$/,
    (i: Issue) =>
      `${show(i.input)} must not contain "?", "#" or spaces (paths are matched without the query)`
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

const keyPart = v.pipe(
  text('a key part'),
  v.check(
    (part) =>
      FIXED_KEY_PARTS.includes(part) ||
      (part.startsWith('header:') && HEADER_NAME.test(part.slice(7))) ||
      (part.startsWith('query:') && part.length > 6),
    (i: Issue) => `${show(i.input)} is not a key part (use ${KEY_PARTS.join(', ')})`
  )
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
  },
  objectMessage('an object')
)

const common = {
  id: v.pipe(
    text('a rule id'),
    v.regex(
      RULE_ID,
      (i: Issue) => `${show(i.input)} is not a rule id (1-64 letters, digits, "_", "-", ".", ":")`
    )
  ),
  description: v.optional(text('a string')),
  match: v.optional(match),
  key: v.pipe(
    v.array(keyPart, (i: Issue) => `expected a list of key parts, got ${show(i.input)}`),
    v.check((parts) => new Set(parts).size === parts.length, 'has a key part twice')
  ),
  limit: wholeNumber(MAX_LIMIT),
  period: duration,
  failMode: v.optional(
    v.picklist(['open', 'closed'], (i: Issue) => `${show(i.input)} is not "open" or "closed"`),
    'open'
  ),
}

const algorithm = <N extends string>(name: N) =>
  v.literal(
    name,
    (i: Issue) => `${show(i.input)} is not an algorithm (use "sliding-window" or "token-bucket")`
  )

/** One rule, as written. */
export const RuleSchema = v.variant(
  'algorithm',
  [
    v.strictObject(
      { ...common, algorithm: algorithm('sliding-window') },
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
        ? 'is required (use "sliding-window" or "token-bucket")'
        : `${show(i.input)} is not an algorithm (use "sliding-window" or "token-bucket")`
)

/** The whole rules document, as written. */
export const RulesDocumentSchema = v.strictObject(
  {
    $schema: v.optional(text('a string')),
    version: v.literal(1, (i: Issue) => `${show(i.input)} is not a supported version (use 1)`),
    rules: v.array(RuleSchema, (i: Issue) => `expected a list of rules, got ${show(i.input)}`),
  },
  objectMessage('a rules document object')
)

/** A rules document after schema validation (durations in ms, methods upper-case). */
export type RulesDocument = v.InferOutput<typeof RulesDocumentSchema>

/** One rule after schema validation. */
export type RuleInput = v.InferOutput<typeof RuleSchema>
