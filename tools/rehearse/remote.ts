/**
 * @module tools/rehearse/remote
 * One document's decisions taken elsewhere (another thread reading the same traffic) and sent
 * back compactly: a batch holds, per request, its line, its outcome and each rule's verdict, with
 * the keys of denials only (all the comparison reads of a key). The receiving side takes them in
 * the traffic's order, request by request, checking that both read the same request. Pure.
 */
import type { Rule } from '../../src/rules'
import type { DecisionView, Outcome } from './engine'
import type { TrafficRecord } from './records'

/** Decisions of consecutive requests, as sent between threads. */
export interface EncodedBatch {
  /** How many requests. */
  count: number
  /**
   * Per request: its line, its outcome's index, its verdicts' count, then per verdict the rule's
   * index and a {@link State}.
   */
  numbers: Int32Array
  /** The key of each denial, in order. */
  keys: string[]
}

const OUTCOMES: readonly Outcome[] = ['allowed', 'denied', 'degraded', 'forbidden', 'bad-request']

/**
 * A verdict: not charged (another rule's known denial came first), allowed or denied; plus
 * {@link SHADOW} for a rule in shadow.
 */
type State = number

const NOT_CHARGED = 0
const ALLOWED = 1
const DENIED = 2
const SHADOW = 4

/** Gathers decisions into batches. */
export class Encoder {
  #numbers: number[] = []
  #keys: string[] = []
  #count = 0
  readonly #index: ReadonlyMap<string, number>

  /** @param rules - the document's rules, whose positions name them */
  constructor(rules: readonly Rule[]) {
    this.#index = new Map(rules.map((rule, i) => [rule.id, i]))
  }

  /** Requests gathered since the last batch was taken. */
  get size(): number {
    return this.#count
  }

  /**
   * Adds a request's decision.
   *
   * @param record - the request
   * @param decision - its decision
   */
  add(record: TrafficRecord, decision: DecisionView): void {
    this.#count++
    const numbers = this.#numbers
    numbers.push(record.line, OUTCOMES.indexOf(decision.outcome), decision.rules.length)
    for (const { check, decision: said } of decision.rules) {
      const verdict = !said ? NOT_CHARGED : said.allowed ? ALLOWED : DENIED
      const state: State = verdict | (check.shadow ? SHADOW : 0)
      numbers.push(this.#index.get(check.rule.id)!, state)
      if (verdict === DENIED) this.#keys.push(check.key)
    }
  }

  /** The batch of what was added since the last one. */
  take(): EncodedBatch {
    const batch = { count: this.#count, numbers: Int32Array.from(this.#numbers), keys: this.#keys }
    this.#numbers = []
    this.#keys = []
    this.#count = 0
    return batch
  }
}

/** Decisions received, taken one request at a time. */
export class Decoder {
  readonly #rules: readonly Rule[]
  readonly #batches: EncodedBatch[] = []
  #at = 0
  #key = 0

  /** @param rules - the document's rules, as the sender numbered them */
  constructor(rules: readonly Rule[]) {
    this.#rules = rules
  }

  /** @param batch - a batch received */
  push(batch: EncodedBatch): void {
    this.#batches.push(batch)
  }

  /** Batches received and not yet taken whole. */
  get pending(): number {
    return this.#batches.length
  }

  /**
   * The next request's decision.
   *
   * @param record - the request the receiver is at: the sender must have decided the same one
   * @throws {Error} when none is left, or it is another request's
   */
  next(record: TrafficRecord): DecisionView {
    const batch = this.#batches[0]
    if (!batch) throw new Error('the other thread sent no decision for this request')
    const numbers = batch.numbers
    let at = this.#at
    if (numbers[at] !== record.line)
      throw new Error(
        `the threads read the traffic differently (line ${numbers[at]}, not ${record.line})`
      )
    const outcome = OUTCOMES[numbers[at + 1]!]!
    const count = numbers[at + 2]!
    at += 3
    const rules: DecisionView['rules'][number][] = []
    for (let i = 0; i < count; i++, at += 2) {
      const rule = this.#rules[numbers[at]!]!
      const state: State = numbers[at + 1]!
      const verdict = state & ~SHADOW
      const key = verdict === DENIED ? batch.keys[this.#key++]! : ''
      const check = { rule, key, shadow: (state & SHADOW) !== 0 }
      rules.push(
        verdict === NOT_CHARGED ? { check } : { check, decision: { allowed: verdict === ALLOWED } }
      )
    }
    if (at >= numbers.length) {
      this.#batches.shift()
      this.#at = 0
      this.#key = 0
    } else this.#at = at
    return { outcome, rules }
  }
}
