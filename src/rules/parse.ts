/**
 * @module rules/parse
 * Validates a rules document once and compiles it into matchers and policies.
 */
import * as v from 'valibot'
import type { Policy } from '../algorithms'
import { RuleConfigError } from '../errors'
import type { FailMode } from '../types'
import { compileCost, type Cost } from './cost'
import { crossCheck } from './cross-check'
import { formatDuration } from './duration'
import { compileGlob, type Glob } from './glob'
import { compilePathPattern } from './match'
import { normalizeHost } from './host'
import { compileEnvoy, type EnvoyDomains } from './envoy'
import { compileField, type Field } from './fields'
import { jsonBoundsProblem } from './json-bounds'
import type { JwtConfig } from './jwt'
import { compileList, type ListMatcher } from './lists'
import { compileTiers, type Tiers } from './tiers'
import { RulesDocumentSchema, show, type RuleInput } from './schema'

/** A compiled key part: where in the request a piece of the limit key comes from. */
export type KeyPart =
  | { kind: 'ip' | 'method' | 'host' | 'country' | 'asn' }
  /** `fold`: lower-cased, for a rule that matches paths without case. */
  | { kind: 'path'; fold: boolean }
  | { kind: 'claim'; name: string }
  | Field

/** Compiled `match`: every present condition must hold. */
export interface Matcher {
  paths?: readonly Glob[]
  /** Whether `paths` keep case; otherwise they and the request path are lower-cased. */
  caseSensitive?: boolean
  methods?: ReadonlySet<string>
  hosts?: readonly Glob[]
  /** `match.headers` and `match.query`: the request's value must be one of those listed. */
  fields?: readonly { field: Field; values: ReadonlySet<string> }[]
}

/** A validated, compiled rule. */
export interface Rule {
  /** Unique id; names the policy in headers and the 429 body. */
  id: string
  /** Which requests the rule applies to. */
  match: Matcher
  /** What identifies a client; an empty list means one counter for everyone. */
  key: readonly KeyPart[]
  /** The limit, as the Durable Object runs it. */
  policy: Policy
  /** What happens when the Durable Object cannot decide. */
  failMode: FailMode
  /** "100 requests per 1m", for messages. */
  summary: string
  /** Units a request takes. */
  cost: Cost
  /** Counted and reported as "would deny", never blocking. */
  shadow: boolean
  /** Ids of rules this one stands in for when both apply to a request. */
  replaces: readonly string[]
  /** Limits by tier, if the rule has tiers. */
  tiers?: Tiers
  /** Whether the rule set its own `burst` (a tier's limit is the burst otherwise). */
  explicitBurst: boolean
}

/** A validated rules document. Frozen: shared by every request in an isolate. */
export interface RuleSet {
  /** Where it came from (`rules.json`, `kv:rules`, …). */
  source: string
  /** The document as it was written (for showing it back, e.g. the admin API). */
  document: unknown
  /** `enforce`; `shadow`: evaluate and count, never block; `off`: the kill switch. */
  mode: 'enforce' | 'shadow' | 'off'
  /** Whether rules in shadow report their headers to clients. */
  shadowHeaders: boolean
  /** Clients that skip limiting. */
  allow?: ListMatcher
  /** Clients refused with 403. */
  deny?: ListMatcher
  /** How tokens whose claims choose tiers are verified. */
  jwt?: JwtConfig
  /** envoyproxy/ratelimit configurations, for `POST /json`. */
  domains: EnvoyDomains
  rules: readonly Rule[]
}

/**
 * Validates and compiles a rules document.
 *
 * @param input - the parsed JSON
 * @param source - where it came from, prefixed to error messages
 * @returns the compiled rule set
 * @throws {RuleConfigError} listing every problem, each with the path of the bad field,
 *   e.g. `rules[1].period: "1x" is not a duration …`; or the one place where the document
 *   goes past `JSON_BOUNDS` (nested more than 32 levels, more than 100,000 values)
 */
export function parseRules(input: unknown, source: string): RuleSet {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RuleConfigError(source, [
      `(document): expected a rules document object, got ${show(input)}`,
    ])
  }
  // Validation and compiling recurse: a document nested thousands deep must stop here.
  const tooBig = jsonBoundsProblem(input)
  if (tooBig) throw new RuleConfigError(source, [tooBig])
  const result = v.safeParse(RulesDocumentSchema, input)
  if (!result.success) {
    throw new RuleConfigError(
      source,
      result.issues.map((issue) => `${pathOf(issue)}: ${issue.message}`)
    )
  }
  const document = result.output
  const problems = crossCheck(document.rules)
  const envoy = compileEnvoy(document.domains ?? [], (index) => ({ path: `domains[${index}]` }))
  problems.push(...envoy.problems)
  document.rules.forEach((rule, index) => {
    if (rule.tiers?.from.startsWith('claim:') && !document.jwt)
      problems.push(`rules[${index}].tiers.from: a claim needs the document's "jwt" settings`)
    rule.key.forEach((part, i) => {
      if (part.startsWith('claim:') && !document.jwt)
        problems.push(`rules[${index}].key[${i}]: a claim needs the document's "jwt" settings`)
    })
  })
  if (problems.length > 0) throw new RuleConfigError(source, problems)
  const ruleSet: RuleSet = {
    source,
    document: input,
    mode: document.mode,
    shadowHeaders: document.shadowHeaders,
    domains: envoy.domains,
    rules: Object.freeze(document.rules.map(compileRule)),
  }
  const allow = compileList(document.lists?.allow)
  const deny = compileList(document.lists?.deny)
  if (allow) ruleSet.allow = allow
  if (deny) ruleSet.deny = deny
  if (document.jwt) ruleSet.jwt = Object.freeze(document.jwt)
  return Object.freeze(ruleSet)
}

/**
 * Parses JSON text, then validates it like {@link parseRules}.
 *
 * @param text - the document as text
 * @param source - where it came from
 * @throws {RuleConfigError} for invalid JSON as well as for invalid rules
 */
export function parseRulesText(text: string, source: string): RuleSet {
  let input: unknown
  try {
    input = JSON.parse(text)
  } catch (error) {
    throw new RuleConfigError(source, [`(document): not valid JSON: ${(error as Error).message}`])
  }
  return parseRules(input, source)
}

function compileRule(input: RuleInput): Rule {
  const base = basePolicy(input)
  const policy: Policy = input.penalty === undefined ? base : { ...base, penaltyMs: input.penalty }
  return Object.freeze({
    id: input.id,
    match: compileMatch(input.match),
    key: Object.freeze(
      input.key.map((part) => compileKeyPart(part, input.match?.caseSensitive ?? false))
    ),
    policy: Object.freeze(policy),
    failMode: input.failMode,
    summary:
      input.algorithm === 'concurrency'
        ? `${input.limit} requests in flight`
        : `${input.limit} requests per ${formatDuration(input.period)}`,
    cost: compileCost(input.cost),
    shadow: input.shadow,
    replaces: Object.freeze(input.replaces ?? []),
    ...(input.tiers ? { tiers: compileTiers(input.tiers) } : {}),
    explicitBurst: 'burst' in input && input.burst !== undefined,
  })
}

/** The policy as the Durable Object runs it (durations in ms, defaults filled in). */
function basePolicy(input: RuleInput): Policy {
  if (input.algorithm === 'concurrency') {
    const { limit, queue, maxWait, lease } = input
    return { algorithm: 'concurrency', limit, periodMs: lease, queue, maxWaitMs: maxWait }
  }
  const { limit, period: periodMs } = input
  switch (input.algorithm) {
    case 'token-bucket':
    case 'gcra':
      return { algorithm: input.algorithm, limit, periodMs, burst: input.burst ?? limit }
    case 'leaky-bucket':
      return input.mode === 'shape'
        ? {
            algorithm: 'leaky-bucket',
            limit,
            periodMs,
            burst: input.burst ?? limit,
            shape: true,
            maxWaitMs: input.maxWait ?? periodMs,
          }
        : { algorithm: 'leaky-bucket', limit, periodMs, burst: input.burst ?? limit }
    default:
      return { algorithm: input.algorithm, limit, periodMs }
  }
}

function compileMatch(match: RuleInput['match']): Matcher {
  if (!match) return {}
  const compiled: Matcher = {}
  if (match.path !== undefined) {
    const caseSensitive = match.caseSensitive ?? false
    compiled.paths = toList(match.path).map((p) => compilePathPattern(p, caseSensitive))
    compiled.caseSensitive = caseSensitive
  }
  if (match.methods !== undefined) compiled.methods = methodSet(match.methods)
  if (match.host !== undefined)
    compiled.hosts = toList(match.host).map((h) => compileGlob(normalizeHost(h)))
  const fields = [
    ...Object.entries(match.headers ?? {}).map(([name, values]) => ({
      field: compileField('header', name),
      values: new Set(values),
    })),
    ...Object.entries(match.query ?? {}).map(([name, values]) => ({
      field: compileField('query', name),
      values: new Set(values),
    })),
  ]
  if (fields.length > 0) compiled.fields = fields
  return Object.freeze(compiled)
}

/**
 * The methods a rule counts. HEAD is counted wherever GET is: every common framework answers
 * HEAD with the GET handler, so leaving it out would let the same work through uncounted.
 */
function methodSet(methods: readonly string[]): ReadonlySet<string> {
  const set = new Set(methods)
  if (set.has('GET')) set.add('HEAD')
  return set
}

function compileKeyPart(part: string, caseSensitive: boolean): KeyPart {
  if (part.startsWith('header:')) return compileField('header', part.slice(7))
  if (part.startsWith('query:')) return compileField('query', part.slice(6))
  if (part.startsWith('claim:')) return { kind: 'claim', name: part.slice(6) }
  if (part === 'cf:country') return { kind: 'country' }
  if (part === 'cf:asn') return { kind: 'asn' }
  if (part === 'path') return { kind: 'path', fold: !caseSensitive }
  return { kind: part as 'ip' | 'method' | 'host' }
}

function toList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value]
}

function pathOf(issue: v.BaseIssue<unknown>): string {
  let path = ''
  // An unknown field is a problem of the object that holds it, so the path stops there.
  const items = issue.expected === 'never' ? (issue.path ?? []).slice(0, -1) : (issue.path ?? [])
  for (const item of items) {
    const key = (item as { key: unknown }).key
    path += typeof key === 'number' ? `[${key}]` : path === '' ? String(key) : `.${String(key)}`
  }
  return path === '' ? '(document)' : path
}
