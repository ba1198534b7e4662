/**
 * @module live/types
 * The live view's records: what an isolate flushes to the stats Durable Object, and what
 * `GET /__ratelimit/stats` shows as `live`. Types only.
 */

/** Requests of one rule, by outcome. */
export interface RuleCounts {
  /** Allowed (a rule in shadow that would have allowed counts here too). */
  allowed: number
  /** Refused by the rule (429, or 504 after a concurrency queue's wait). */
  limited: number
  /** Would have been refused by a rule in shadow, and were let through. */
  shadowLimited: number
  /** Over the limit of a rule with `action: "degrade"`, and served the lighter answer. */
  degraded: number
}

/** Which of {@link RuleCounts} a decision adds to. */
export type Outcome = keyof RuleCounts

/** A limited key as flushed and stored: the key as it may be shown (raw, or its hash). */
export interface LimitedKey {
  rule: string
  key: string
  /** Requests limited (an upper bound once the sketch is full, see `live/sketch`). */
  count: number
  /** When the latest refusal said the key may try again (Unix ms). */
  retryAtMs: number
}

/** What one isolate counted in one minute. */
export interface MinuteBatch {
  /** Start of the minute (Unix ms, a multiple of 60 000). */
  minute: number
  /** Counts per rule id. */
  rules: Record<string, RuleCounts>
  /** The most limited keys of the minute, most limited first. */
  limited: LimitedKey[]
}

/** One minute of a rule's series. */
export interface MinuteEntry extends RuleCounts {
  /** Start of the minute (Unix ms). */
  minute: number
}

/** One rule in the live view: totals over the last 60 minutes and the series they sum. */
export interface RuleSeries extends RuleCounts {
  /** The last 60 minutes, oldest first, the current one last; minutes without traffic are 0. */
  minutes: MinuteEntry[]
}

/** One of the most limited keys of the last 60 minutes. */
export interface TopLimited {
  rule: string
  /** The limit key, or `hmac:<hex prefix>` of it (see `http/observe/key-hash.ts`) when the rule's `showKeys` is false. */
  key: string
  /** Requests limited in the last 60 minutes. */
  count: number
  /** Time until the key may try again, from its latest refusal (ms; 0 once that has passed). */
  retryAfterMs: number
}

/** `live` of `GET /__ratelimit/stats`. */
export interface LiveView {
  /** Per rule id (rules with traffic in the last 60 minutes). */
  rules: Record<string, RuleSeries>
  /** The most limited keys, largest `count` first (at most 100). */
  topLimited: TopLimited[]
}
