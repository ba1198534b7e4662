/**
 * @module tools/rehearse/engine
 * One rules document deciding recorded requests as the Worker decides them, in virtual time: the
 * plan (`planRequest`: lists, matches, keys, replaced rules, tiers, costs), the denials an
 * isolate repeats itself (`BlockCache`), each key's algorithm inside its penalty box
 * (`chargeKey`, or `gateKey` for a rule counting responses), and after an allowed request the
 * responses a `countOn` rule counts, from the recorded status. Exact mode throughout: what the
 * key's Durable Object decides. As one isolate: a key the isolate knows to be denied refuses the
 * request before the other rules are charged, as `chargeAll` does (src/http/request/charge.ts).
 * Pure: time is the request's.
 */
import {
  chargeKey,
  keyStateExpiresAtMs,
  type KeyState,
  type Outcome as Step,
  type Policy,
} from '../../src/algorithms'
import { gateKey } from '../../src/algorithms/gate'
import { BadRequestError } from '../../src/errors'
import { degradation } from '../../src/http/request/degrade'
import { BlockCache } from '../../src/limiter/exact/block-cache'
import { planRequest, responseCost, type Check, type Rule, type RuleSet } from '../../src/rules'
import type { Decision, RequestFacts } from '../../src/types'

/** What became of a request: as the Worker answers it. */
export type Outcome =
  /** To the origin (a shaper's wait included). */
  | 'allowed'
  /** 429: a rule that rejects refused it. */
  | 'denied'
  /** To a lighter answer: only rules with `action: "degrade"` refused it. */
  | 'degraded'
  /** 403: a deny list. */
  | 'forbidden'
  /** 400: a rule could not read it unambiguously. */
  | 'bad-request'

/** One rule's part in a request. */
export interface RuleVerdict {
  check: Check
  /** Its key's decision; absent when another rule's known denial refused the request first. */
  decision?: Decision
}

/** A request's decision under one rules document. */
export interface RequestDecision {
  outcome: Outcome
  /** The rules that applied (in rule order; `maxInFlight` slots left out). */
  rules: RuleVerdict[]
}

/**
 * What the comparison reads of a decision: a {@link RequestDecision} is one, and so is a decision
 * taken in another thread and sent back (`remote.ts`).
 */
export interface DecisionView {
  outcome: Outcome
  rules: readonly {
    check: { rule: { id: string }; key: string; shadow: boolean }
    decision?: { allowed: boolean }
  }[]
}

/** A key's stored state, as the Durable Object keeps it: with the policy it was computed under. */
interface KeyRecord {
  policy: Policy
  state: KeyState
}

/**
 * Every key's state, as the Durable Objects hold it. A state past its expiry is equivalent to
 * none (the object's alarm deletes it): such states are dropped whenever the map has grown to four
 * times what the last sweep left, so memory follows the keys alive in a window, not the traffic,
 * and a sweep's cost is spread over the keys added since (a sweep at twice the size cost about
 * 5 µs a request on the benchmark's rules, where a rule keyed on address and path adds a key with
 * nearly every request).
 */
class KeyStates {
  /**
   * A map of keys per rule: most checks are of rules with few keys (a global counter, a limit per
   * address), whose maps stay in the cache; one map of every key cost about 1 µs a lookup.
   */
  readonly #rules = new Map<Rule, Map<string, KeyRecord>>()
  #size = 0
  #sweepAt = 4096

  run(
    check: { rule: Rule; key: string; policy: Policy; cost: number },
    nowMs: number,
    step: (
      state: KeyState | undefined,
      policy: Policy,
      nowMs: number,
      cost: number
    ) => Step<KeyState | undefined>
  ): Decision {
    const { key, policy } = check
    let records = this.#rules.get(check.rule)
    if (!records) this.#rules.set(check.rule, (records = new Map()))
    const record = records.get(key)
    // As the object reads it: a state under another algorithm or period is none (a rule edit).
    const current =
      record &&
      record.policy.algorithm === policy.algorithm &&
      record.policy.periodMs === policy.periodMs
        ? record.state
        : undefined
    const { state, decision } = step(current, policy, nowMs, check.cost)
    if (state === undefined || state === current) return decision
    if (record) {
      record.policy = policy
      record.state = state
    } else {
      records.set(key, { policy, state })
      if (++this.#size >= this.#sweepAt) this.#sweep(nowMs)
    }
    return decision
  }

  /** Keys held now. */
  get size(): number {
    return this.#size
  }

  #sweep(nowMs: number): void {
    for (const records of this.#rules.values())
      for (const [key, { state, policy }] of records)
        if (keyStateExpiresAtMs(state, policy) <= nowMs) {
          records.delete(key)
          this.#size--
        }
    this.#sweepAt = Math.max(4096, 4 * this.#size)
  }
}

/** A rules document's limiter over recorded requests: one isolate and its Durable Objects. */
export class ReplayLimiter {
  readonly #ruleSet: RuleSet
  readonly #leftOut: ReadonlySet<string>
  readonly #keys = new KeyStates()
  readonly #blocks = new BlockCache()

  /**
   * @param ruleSet - the rules document, compiled
   * @param leftOut - ids of rules (and `lists.allow`, `lists.deny`) not judged (see `needs.ts`):
   *   never charged
   */
  constructor(ruleSet: RuleSet, leftOut: ReadonlySet<string> = new Set()) {
    // A list the traffic cannot judge is left out as a rule is (see `needs.ts`).
    this.#ruleSet = {
      ...ruleSet,
      rules: ruleSet.rules.map(thawed),
      allow: leftOut.has('lists.allow') ? undefined : ruleSet.allow,
      deny: leftOut.has('lists.deny') ? undefined : ruleSet.deny,
    }
    this.#leftOut = leftOut
  }

  /** Keys whose state is held now. */
  get keys(): number {
    return this.#keys.size
  }

  /**
   * Decides a request at `nowMs`, then counts its response (status `status`) for the rules that
   * count responses, as the Worker does once its origin answered.
   *
   * @param facts - the request's facts
   * @param status - the recorded response status, if the traffic has one
   * @param nowMs - the request's time
   */
  decide(facts: RequestFacts, status: number | undefined, nowMs: number): RequestDecision {
    let plan
    try {
      plan = planRequest(this.#ruleSet, facts)
    } catch (error) {
      if (error instanceof BadRequestError) return { outcome: 'bad-request', rules: [] }
      throw error
    }
    if (plan.action === 'deny') return { outcome: 'forbidden', rules: [] }
    if (plan.action === 'pass') return { outcome: 'allowed', rules: [] }
    // maxInFlight slots: a replayed request's response comes before the next request, so its
    // slot is always free again (how long requests were in flight is not in the logs).
    const rules: RuleVerdict[] = []
    let blocked = false
    for (const check of plan.checks) {
      if (check.inFlight || (this.#leftOut.size > 0 && this.#leftOut.has(check.rule.id))) continue
      const local =
        check.policy.algorithm === 'concurrency'
          ? undefined
          : this.#blocks.answer(check.key, check.policy, check.cost, nowMs)
      if (local && refuses(check)) blocked = true
      rules.push(local ? { check, decision: local } : { check })
    }
    let denied: { check: Check; decision: Decision }[] | undefined
    for (const verdict of rules) {
      const { check } = verdict
      if (!verdict.decision && !blocked)
        verdict.decision = this.#charge(check, nowMs, check.deferred ? gateKey : chargeKey)
      const decision = verdict.decision
      if (decision && !decision.allowed && !check.shadow) (denied ??= []).push({ check, decision })
    }
    if (denied && !degradation(denied)) return { outcome: 'denied', rules }
    if (status !== undefined) this.#countResponses(rules, status, nowMs)
    return { outcome: denied ? 'degraded' : 'allowed', rules }
  }

  /** A key charged (or checked) in its object, its denial remembered by the isolate. */
  #charge(check: Check, nowMs: number, step: typeof chargeKey | typeof gateKey): Decision {
    const decision = this.#keys.run(check, nowMs, step)
    this.#blocks.note(check.key, check.policy, check.cost, decision, nowMs)
    return decision
  }

  /** `countResponse` (src/http/request/count-on.ts): the response charged where it counts. */
  #countResponses(rules: readonly RuleVerdict[], status: number, nowMs: number): void {
    for (const { check, decision } of rules) {
      const countOn = check.rule.countOn
      if (!check.deferred || !countOn || !decision?.allowed || !countOn.counts(status)) continue
      const capacity = 'burst' in check.policy ? check.policy.burst : check.policy.limit
      // No response header in a log: the response costs what the request does.
      const cost = responseCost(countOn, null, check.cost, capacity)
      if (cost <= 0) continue
      const charged = { ...check, deferred: false, cost }
      if (!this.#blocks.answer(check.key, check.policy, cost, nowMs))
        this.#charge(charged, nowMs, chargeKey)
    }
  }
}

/**
 * A rule as the plan reads it, its lists not frozen: V8 (Node 22) iterates a frozen array 4 to 45
 * times slower than another (`for...of`, indexing, `some`, `flatMap`), and the plan walks the
 * rules and their key parts for every request. A copy of the list, its rules and their keys;
 * nothing else changes.
 */
function thawed(rule: Rule): Rule {
  return { ...rule, key: [...rule.key], replaces: [...rule.replaces] }
}

/** Whether a denial under this check refuses the request (`chargeAll`'s `refuses`). */
function refuses(check: Check): boolean {
  return !check.shadow && check.rule.degrade === undefined
}
