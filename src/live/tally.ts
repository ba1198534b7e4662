/**
 * @module live/tally
 * One isolate's counts since its last flush: per rule per minute, and the most limited keys
 * per minute in a space-saving sketch. A few map updates per decision; `take` hands the whole
 * batch over and starts afresh. Pure: the time comes in as `nowMs`.
 */
import { SpaceSaving } from './sketch'
import type { LimitedKey, MinuteBatch, Outcome, RuleCounts } from './types'

/** Slots of each minute's limited-keys sketch. */
export const SKETCH_SLOTS = 100

/** A minute is kept at most this long unflushed (flushes failing or not happening). */
const KEEP_MINUTES = 60

const MINUTE_MS = 60_000

/** Every count of a rule's {@link RuleCounts}, in the order they are shown. */
export const OUTCOMES = ['allowed', 'limited', 'shadowLimited', 'degraded'] as const

/** Counts of nothing yet. */
export function noCounts(): RuleCounts {
  return { allowed: 0, limited: 0, shadowLimited: 0, degraded: 0 }
}

/** A limited key as counted: raw, with whether it must be hashed before it leaves the isolate. */
export interface TalliedKey extends LimitedKey {
  hide: boolean
}

/** A minute as counted, before its hidden keys are hashed. */
export interface TalliedMinute extends Omit<MinuteBatch, 'limited'> {
  limited: TalliedKey[]
}

interface Minute {
  rules: Map<string, RuleCounts>
  limited: SpaceSaving<{ rule: string; key: string; retryAtMs: number; hide: boolean }>
}

/**
 * The start of the minute `nowMs` falls in.
 *
 * @param nowMs - Unix ms
 */
export function minuteOf(nowMs: number): number {
  return nowMs - (nowMs % MINUTE_MS)
}

/** An isolate's unflushed counts. */
export class LiveTally {
  readonly #minutes = new Map<number, Minute>()

  /**
   * Counts one decision of one rule.
   *
   * @param rule - the rule id
   * @param outcome - which count it adds to
   * @param nowMs - when it was decided
   */
  count(rule: string, outcome: Outcome, nowMs: number): void {
    const minute = this.#minute(nowMs)
    let counts = minute.rules.get(rule)
    if (!counts) minute.rules.set(rule, (counts = noCounts()))
    counts[outcome]++
  }

  /**
   * Notes a refusal of `key`.
   *
   * @param rule - the rule id
   * @param key - the limit key
   * @param hide - whether the rule shows only its keys' hashes (`showKeys: false`)
   * @param retryAtMs - when the refusal said it may try again (Unix ms)
   * @param nowMs - when it was refused
   */
  limited(rule: string, key: string, hide: boolean, retryAtMs: number, nowMs: number): void {
    this.#minute(nowMs).limited.add(`${rule}\n${key}`, { rule, key, retryAtMs, hide })
  }

  /** Whether anything was counted since the last `take`. */
  get pending(): boolean {
    return this.#minutes.size > 0
  }

  /** Everything counted since the last `take`, oldest minute first; the tally starts afresh. */
  take(): TalliedMinute[] {
    const batch = [...this.#minutes.entries()]
      .sort(([a], [b]) => a - b)
      .map(([minute, { rules, limited }]) => ({
        minute,
        rules: Object.fromEntries(rules),
        limited: limited.top().map(({ count, value }) => ({ ...value, count })),
      }))
    this.#minutes.clear()
    return batch
  }

  #minute(nowMs: number): Minute {
    const start = minuteOf(nowMs)
    let minute = this.#minutes.get(start)
    if (!minute) {
      for (const old of this.#minutes.keys())
        if (old <= start - KEEP_MINUTES * MINUTE_MS) this.#minutes.delete(old)
      minute = { rules: new Map(), limited: new SpaceSaving(SKETCH_SLOTS) }
      this.#minutes.set(start, minute)
    }
    return minute
  }
}
