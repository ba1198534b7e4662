/**
 * @module rules/compile
 * One validated rule compiled into the matcher, key parts and policy the limiter runs.
 */
import type { Policy } from '../algorithms'
import { compileCost } from './cost'
import { compileCountOn } from './count-on'
import type { Degrade } from './degrade'
import { formatDuration } from './duration'
import { compileField } from './fields'
import { compileGlob } from './glob'
import { normalizeHost } from './host'
import { compilePathPattern } from './match'
import { compileMessages } from './messages'
import { compilePlacement } from './placement'
import type { CheckedRule } from './document'
import { compileTiers } from './tiers'
import type { KeyPart, Matcher, Rule } from './types'
import type { Jurisdiction } from '../types'

/** Key parts that may carry a credential (an API key, a user id): hidden unless `showKeys`. */
const SECRET_KEY_PART = /^(header|query|claim):/

/**
 * Compiles a rule that passed validation (and the document's cross-checks).
 *
 * @param input - the validated rule
 * @param jurisdiction - the document's `jurisdiction`, for rules without their own
 */
export function compileRule(input: CheckedRule, jurisdiction?: Jurisdiction): Rule {
  const base = basePolicy(input)
  const placement = compilePlacement(input, jurisdiction)
  const policy: Policy = input.penalty === undefined ? base : { ...base, penaltyMs: input.penalty }
  const explicitBurst = 'burst' in input && input.burst !== undefined
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
    ...(input.tiers ? { tiers: compileTiers(input.tiers, policy, explicitBurst) } : {}),
    showKeys: input.showKeys ?? input.key.every((part) => !SECRET_KEY_PART.test(part)),
    ...(input.nearLimit !== undefined ? { nearLimit: input.nearLimit } : {}),
    paths: Object.freeze(input.match?.path === undefined ? [] : toList(input.match.path)),
    consistency: input.consistency,
    ...(placement ? { placement } : {}),
    ...(input.countOn ? { countOn: compileCountOn(input.countOn, input.maxInFlight) } : {}),
    ...(input.action === 'degrade' ? { degrade: compileDegrade(input.degradeTo) } : {}),
    ...(input.messages ? { messages: compileMessages(input.messages) } : {}),
  })
}

/** Where a limited request of a degrading rule goes: another path, or the same one marked. */
function compileDegrade(to: string | undefined): Degrade {
  return to !== undefined ? Object.freeze({ to }) : Object.freeze({ header: true as const })
}

/** The policy as the Durable Object runs it (durations in ms, defaults filled in). */
function basePolicy(input: CheckedRule): Policy {
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

function compileMatch(match: CheckedRule['match']): Matcher {
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
