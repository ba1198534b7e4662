/**
 * @module algorithms/types
 * Policies, states and the contract every algorithm implements.
 */
import type { Decision } from '../types'

/** What every policy may add to its algorithm. */
interface PolicyOptions {
  /** After a denial, keep the key blocked this long (the penalty box). */
  penaltyMs?: number
  /**
   * The tier a rule's `tiers` gave the request, if any: the key's object tells one version of a
   * tier's policy from another by it (`key-record.ts`), and a lease book keeps a lease per tier.
   */
  tier?: string
}

/** Sliding-window counter: at most `limit` units in any window of `periodMs` (approximately). */
export interface SlidingWindowPolicy extends PolicyOptions {
  algorithm: 'sliding-window'
  /** Units allowed per window. */
  limit: number
  /** Window length in ms. */
  periodMs: number
}

/** Token bucket: refills `limit` tokens per `periodMs`, holds at most `burst`. */
export interface TokenBucketPolicy extends PolicyOptions {
  algorithm: 'token-bucket'
  /** Tokens added per period. */
  limit: number
  /** Refill period in ms. */
  periodMs: number
  /** Bucket capacity: the largest burst a full bucket admits. */
  burst: number
}

/** Fixed window: at most `limit` units per epoch-aligned window of `periodMs`. */
export interface FixedWindowPolicy extends PolicyOptions {
  algorithm: 'fixed-window'
  /** Units allowed per window (0 refuses everything). */
  limit: number
  /** Window length in ms. */
  periodMs: number
  /** Count denied requests too (envoyproxy/ratelimit's behaviour). */
  countDenied?: boolean
}

/** Sliding window log: exactly at most `limit` units in any window of `periodMs`. */
export interface SlidingLogPolicy extends PolicyOptions {
  algorithm: 'sliding-log'
  limit: number
  periodMs: number
}

/** GCRA: `limit` per `periodMs` with a tolerance of `burst` back-to-back units. */
export interface GcraPolicy extends PolicyOptions {
  algorithm: 'gcra'
  limit: number
  periodMs: number
  burst: number
}

/** Leaky bucket: leaks `limit` per `periodMs`, holds `burst`; a meter, or a shaper with `shape`. */
export interface LeakyBucketPolicy extends PolicyOptions {
  algorithm: 'leaky-bucket'
  limit: number
  periodMs: number
  burst: number
  /** Shape (delay admitted requests to the leak rate) instead of only metering. */
  shape?: boolean
  /** The longest a shaped request may wait. */
  maxWaitMs?: number
}

/** Concurrency limit: at most `limit` requests in flight, each holding a slot for `periodMs` at most. */
export interface ConcurrencyPolicy extends PolicyOptions {
  algorithm: 'concurrency'
  /** Slots: requests in flight at once. */
  limit: number
  /** The lease of a slot: a request that never releases frees it after this long. */
  periodMs: number
  /** Requests that may wait for a slot. */
  queue: number
  /** The longest a request waits in the queue. */
  maxWaitMs: number
}

/** Every policy the Durable Object can run, discriminated on `algorithm`. */
export type Policy =
  | SlidingWindowPolicy
  | TokenBucketPolicy
  | FixedWindowPolicy
  | SlidingLogPolicy
  | GcraPolicy
  | LeakyBucketPolicy
  | ConcurrencyPolicy

/** The names of the algorithms. */
export type AlgorithmName = Policy['algorithm']

/** The result of running an algorithm: the state to keep and the decision to report. */
export interface Outcome<S> {
  /**
   * The state to store. It is the very object passed in (or `undefined` if none was) when
   * nothing was charged, so callers can skip the write.
   */
  state: S | undefined
  /** What was decided. */
  decision: Decision
}

/**
 * How units reserved for a lessee are taken (leased quotas, `reserve.ts`): units charged ahead
 * for the next window, or units a lessee holds until a time. Each algorithm reads the part that
 * applies to it; a plain charge has none.
 */
export interface Hold {
  /**
   * Window algorithms: charge the window after the current one (spent only once it begins).
   * The decision's `remaining` is then what that window can still be charged.
   */
  ahead?: boolean
  /**
   * Sliding window: charge the next window's ramp at this slot (spent only from that slot's
   * time in the next window). The decision's `remaining` is what the slot can still be charged.
   */
  rampSlot?: number
  /**
   * Sliding window: charge units spendable only from this time, later in the current window.
   * The decision's `remaining` is what can still be charged for that time.
   */
  fromMs?: number
  /**
   * Bucket algorithms: the lessee may spend the units until then. Until then the bucket counts
   * them as still in it: it refills only up to `burst` less the units held, so units spent late
   * never add to a full bucket.
   */
  untilMs?: number
}

/** A rate-limit algorithm: pure functions of (state, policy, nowMs, cost). */
export interface Algorithm<P extends Policy, S> {
  /**
   * Decides whether `cost` units may be taken now and returns the next state. A denied
   * request (or a cost of 0) leaves the state untouched.
   */
  charge(state: S | undefined, policy: P, nowMs: number, cost: number, hold?: Hold): Outcome<S>
  /** When `state` becomes equivalent to no state at all (Unix ms): idle keys may be deleted then. */
  expiresAtMs(state: S, policy: P): number
  /**
   * Leasable algorithms: takes back units a lessee did not spend, from the lot they were
   * granted in, where that can never admit more than if they had not been taken. The very
   * state passed in when nothing can be taken back (their window ended, their hold lapsed).
   */
  refund?(state: S, policy: P, nowMs: number, units: number, lot: LotSpan): S
  /**
   * Bucket algorithms: units of a hold its lessee reports spent. They leave the hold without
   * coming back (they were spent), so the bucket may refill past them from now on; a hold of
   * spent units would keep it short of its burst until the hold lapses. The very state passed
   * in when the hold is gone.
   */
  spent?(state: S, policy: P, nowMs: number, units: number, lot: LotSpan): S
  /**
   * Window algorithms: units charged for later (the next window, a later time in this one, as
   * leased quotas charge them) that a charge now does not count yet.
   */
  pendingUnits?(state: S, policy: P, nowMs: number): number
}

/** When a lot of reserved units may be spent: from its window's start (or its grant) until. */
export interface LotSpan {
  validFromMs: number
  validUntilMs: number
}

/**
 * Slack for floating-point comparisons. Counts and tokens are whole units or simple fractions,
 * so anything within 1e-9 of a boundary is the boundary, not a rounding accident past it.
 */
export const EPSILON = 1e-9

/**
 * Rounds a duration up to whole ms, forgiving float noise: a wait computed as 99.99999999997 ms
 * (or 1e10 ms plus a few millionths) is the whole number it stands for, not one more.
 *
 * @param ms - a computed duration
 */
export function ceilMs(ms: number): number {
  return Math.ceil(ms - Math.abs(ms) * 1e-12 - EPSILON)
}
