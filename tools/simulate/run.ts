/**
 * @module tools/simulate/run
 * Runs rules over simulated requests with the project's own code: `parseRules` for the rules,
 * `limitKey` for the counter a request is charged to, `chargeKey` (what the Durable Object runs)
 * for the decision. Pure: virtual time, no I/O.
 */
import { chargeKey, type KeyState } from '../../src/algorithms'
import { gateKey } from '../../src/algorithms/gate'
import { RuleConfigError } from '../../src/errors'
import { limitKey, parseRules, type Rule, type RuleSet } from '../../src/rules'
import type { Decision, RequestFacts } from '../../src/types'
import type { Arrival } from './profile'

/**
 * Unix ms of virtual time 0 (2025-01-01T00:00:00Z). A whole second, so epoch-aligned fixed
 * windows line up with the seconds of the charts.
 */
export const START_MS = 1_735_689_600_000

/** One rule per algorithm, all global (`key: []`), as the simulator runs them by default. */
export function defaultRules(limit = 500, period = '1s'): Record<string, unknown>[] {
  const rule = (id: string, algorithm: string, extra: Record<string, unknown> = {}) => ({
    id,
    key: [],
    algorithm,
    limit,
    period,
    ...extra,
  })
  return [
    rule('fixed-window', 'fixed-window'),
    rule('sliding-window', 'sliding-window'),
    rule('token-bucket', 'token-bucket', { burst: limit }),
    rule('sliding-log', 'sliding-log'),
    rule('gcra', 'gcra', { burst: limit }),
    rule('leaky-bucket', 'leaky-bucket', { burst: limit }),
    rule('leaky-bucket-shaper', 'leaky-bucket', { burst: limit, mode: 'shape', maxWait: '1s' }),
  ]
}

/**
 * Compiles candidate rules one by one, so a rule this build of the limiter rejects (say, an
 * algorithm it does not know yet) is skipped instead of failing the whole document.
 *
 * @param rules - rule objects as written in a rules document
 * @param source - named in messages
 * @returns the rule set of the accepted rules, and one note per skipped rule
 */
export function compileEach(
  rules: readonly Record<string, unknown>[],
  source = 'default rules'
): { ruleSet: RuleSet; skipped: string[] } {
  const accepted: Record<string, unknown>[] = []
  const skipped: string[] = []
  for (const rule of rules) {
    try {
      parseRules({ version: 1, rules: [rule] }, source)
      accepted.push(rule)
    } catch (error) {
      if (!(error instanceof RuleConfigError)) throw error
      skipped.push(`skipped ${String(rule.id)}: ${error.problems.join('; ')}`)
    }
  }
  return { ruleSet: parseRules({ version: 1, rules: accepted }, source), skipped }
}

/** A trace key that cannot stand for a rule's key part (the trace's fault, not the rule's). */
export class KeyMappingError extends Error {
  override name = 'KeyMappingError'
}

/** What one rule decided for every request, indexed like the requests. */
export interface RuleOutcomes {
  rule: Rule
  /** The limit key each request was charged to. */
  keys: string[]
  allowed: boolean[]
  remaining: number[]
  /** How long each allowed request waits before it runs (a shaper's `delayMs`; else 0). */
  delayMs: number[]
}

/**
 * Runs every rule independently over the requests; each rule keeps its own state per key. A
 * request's trace key stands for the value of each of the rule's key parts; a rule keyed `[]`
 * has one global key. Matching (`match`), tiers and the rule's own `cost` are not simulated:
 * every rule sees every request at the request's cost.
 *
 * @param arrivals - requests sorted by time
 * @param rules - the rules to run
 * @throws {KeyMappingError} when a trace key cannot stand for a rule's key part (e.g. not a number for
 *   `cf:asn`, or not a valid header value)
 */
export function runRules(arrivals: readonly Arrival[], rules: readonly Rule[]): RuleOutcomes[] {
  const facts = new Map<string, RequestFacts>()
  return rules.map((rule) => {
    const states = new Map<string, KeyState | undefined>()
    const out: RuleOutcomes = { rule, keys: [], allowed: [], remaining: [], delayMs: [] }
    for (const { t, key, cost, status } of arrivals) {
      let requestFacts = facts.get(key)
      if (!requestFacts) facts.set(key, (requestFacts = factsFor(key, rules)))
      const limitKeyValue = limitKey(rule, requestFacts)
      if (limitKeyValue === undefined)
        throw new KeyMappingError(
          `rule ${rule.id}: the trace key ${JSON.stringify(key)} cannot stand for its key ` +
            '(cf:asn needs a whole number)'
        )
      const { state, decision } = decide(
        rule,
        states.get(limitKeyValue),
        START_MS + t,
        cost,
        status
      )
      states.set(limitKeyValue, state)
      out.keys.push(limitKeyValue)
      out.allowed.push(decision.allowed)
      out.remaining.push(decision.remaining)
      out.delayMs.push(decision.allowed ? (decision.delayMs ?? 0) : 0)
    }
    return out
  })
}

/** Thrown when a rule counts responses and the trace has no status for a request. */
export class MissingStatusError extends Error {
  override name = 'MissingStatusError'
}

/**
 * One request under one rule, as the Worker takes it: charged at once, or, for a rule that
 * counts responses (`countOn`), checked first and charged when its response (the trace's
 * status) counts. A trace has no concurrency, so the race `maxInFlight` bounds does not arise.
 */
function decide(
  rule: Rule,
  key: KeyState | undefined,
  nowMs: number,
  cost: number,
  status: number | undefined
): { state: KeyState | undefined; decision: Decision } {
  const countOn = rule.countOn
  if (!countOn) return chargeKey(key, rule.policy, nowMs, cost)
  if (status === undefined)
    throw new MissingStatusError(
      `rule ${rule.id} counts responses (countOn): give every request of the trace a "status"`
    )
  const checked = gateKey(key, rule.policy, nowMs, cost)
  if (!checked.decision.allowed || !countOn.counts(status)) return checked
  const { state } = chargeKey(checked.state, rule.policy, nowMs, cost)
  return { state, decision: checked.decision }
}

/** Whether a rule delays what it admits (a shaper), so it is judged by execution time. */
export function isShaper(rule: Rule): boolean {
  return 'shape' in rule.policy && rule.policy.shape === true
}

/** Request facts in which every key part any of the rules uses has the value `key`. */
function factsFor(key: string, rules: readonly Rule[]): RequestFacts {
  const headers = new Headers()
  const query = new URLSearchParams()
  for (const part of rules.flatMap((rule) => rule.key)) {
    if (part.kind === 'header') {
      try {
        headers.set(part.name, key)
      } catch {
        throw new KeyMappingError(
          `the trace key ${JSON.stringify(key)} is not a valid header value`
        )
      }
    }
    if (part.kind === 'query') query.set(part.name, key)
  }
  const facts: RequestFacts = {
    method: key,
    host: key,
    path: key,
    query,
    headers,
    address: key,
    ip: key,
    country: key,
  }
  if (/^[0-9]+$/.test(key)) facts.asn = Number(key)
  return facts
}
