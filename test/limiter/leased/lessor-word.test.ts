import { describe, expect, it } from 'vitest'
import { bucketHoldMs, type LeasablePolicy } from '../../../src/algorithms/reserve'
import type { TokenBucketPolicy } from '../../../src/algorithms/types'
import type { KeyLease } from '../../../src/limiter/leased/key-lease'
import { scarceWaitMs } from '../../../src/limiter/leased/lease-sizing'
import {
  lesseeState,
  paceByAnswer,
  quietDecision,
  snapshotOf,
  spreadWindowStart,
} from '../../../src/limiter/leased/lessor-word'
import type { Reservation } from '../../../src/limiter/leased/reservation'

const MINUTE = 60_000
const sliding: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000, periodMs: MINUTE }
const bucket: TokenBucketPolicy = {
  algorithm: 'token-bucket',
  limit: 6_000,
  periodMs: MINUTE,
  burst: 500,
}
const WINDOW = 10 * MINUTE

/** A lease that spends 10 units a second (not one that asks per request). */
function leaseOf(policy: LeasablePolicy, fields: Partial<KeyLease> = {}): KeyLease {
  return {
    ruleId: 'r',
    key: 'k',
    policy,
    lots: [],
    rate: 0.01,
    demandSinceReserve: 0,
    horizonMs: 400,
    roundTripMs: 20,
    quietUntilMs: 0,
    scarceUntilMs: 0,
    aheadRefusedUntilMs: 0,
    lastUsedMs: 0,
    waiting: 0,
    ...fields,
  }
}

function answer(fields: Partial<Reservation>): Reservation {
  return {
    granted: 0,
    decision: { allowed: false, limit: 6_000, remaining: 0, resetAtMs: 0, retryAfterMs: 50 },
    chargedAtMs: 0,
    validUntilMs: 0,
    epoch: 'e',
    horizonMs: 400,
    scarce: false,
    ...fields,
  }
}

describe('the decision a lessee gives from its lessor word', () => {
  it('before any answer: the limit, nothing left, nothing to wait for', () => {
    expect(snapshotOf(leaseOf(sliding), 1_234)).toEqual({
      allowed: true,
      limit: 6_000,
      remaining: 0,
      resetAtMs: 1_234,
      retryAfterMs: 0,
    })
  })

  it('while quiet: a denial until the lessee may ask again, or the lessor said longer', () => {
    const snapshot = { allowed: true, limit: 6_000, remaining: 9, resetAtMs: 9, retryAfterMs: 0 }
    const quiet = leaseOf(sliding, { snapshot, quietUntilMs: 1_300 })
    expect(quietDecision(quiet, 1_000)).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 300,
    })
    const later = leaseOf(sliding, { snapshot: { ...snapshot, retryAfterMs: 700 } })
    expect(quietDecision(later, 1_000).retryAfterMs).toBe(700)
    expect(quietDecision(leaseOf(sliding), 1_000).retryAfterMs).toBe(1)
  })
})

describe('pacing by the lessor answer', () => {
  const nowMs = WINDOW + 20_000

  it('a root lessee told the key is scarce stays so past the window, and waits out its pace', () => {
    const lease = leaseOf(sliding)
    paceByAnswer(lease, answer({ scarce: true }), nowMs, { spread: 0.5, scarceForWindow: true })
    expect(lease.scarceUntilMs).toBe(WINDOW + MINUTE + 800)
    expect(lease.quietUntilMs).toBe(nowMs + scarceWaitMs(400, 0.5))
    expect(lease.shortWaitMs).toBeUndefined()
  })

  it('an isolate told the key is scarce stays so for two horizons', () => {
    const lease = leaseOf(sliding)
    paceByAnswer(lease, answer({ scarce: true }), nowMs, { spread: 0, scarceForWindow: false })
    expect(lease.scarceUntilMs).toBe(nowMs + 800)
    expect(lease.quietUntilMs).toBe(nowMs + 300)
  })

  it('a lessor short until its own next ask: come back then, and deny meanwhile', () => {
    const lease = leaseOf(sliding)
    const short = answer({ scarce: true, refillInMs: 120 })
    paceByAnswer(lease, short, nowMs, { spread: 0, scarceForWindow: false })
    expect(lease.quietUntilMs).toBe(nowMs + 120)
    expect(lease.shortWaitMs).toBe(120)
    expect(lease.scarceUntilMs).toBe(0)
  })

  it("the root short: a window's rest, a bucket's hold", () => {
    const windowed = leaseOf(sliding)
    paceByAnswer(windowed, answer({ rootShort: true }), nowMs, {
      spread: 0,
      scarceForWindow: false,
    })
    expect(windowed.rootShortUntilMs).toBe(WINDOW + MINUTE + 800)
    const held = leaseOf(bucket)
    paceByAnswer(held, answer({ rootShort: true }), nowMs, { spread: 0, scarceForWindow: false })
    expect(held.rootShortUntilMs).toBe(nowMs + Math.max(800, bucketHoldMs(bucket)))
  })

  it('a key that asks per request keeps no pace', () => {
    const lease = leaseOf(sliding, { rate: 0.000_1 })
    paceByAnswer(lease, answer({ scarce: true, rootShort: true }), nowMs, {
      spread: 0,
      scarceForWindow: true,
    })
    expect([lease.scarceUntilMs, lease.quietUntilMs, lease.rootShortUntilMs]).toEqual([
      0,
      0,
      undefined,
    ])
  })
})

describe("a root lessee's first ask of a window", () => {
  const lot = (validUntilMs: number) => ({
    units: 3,
    epoch: 'e',
    chargedAtMs: 0,
    validFromMs: 0,
    validUntilMs,
  })

  it('waits for its own point of the first moments when its units lapsed at the start', () => {
    const lease = leaseOf(sliding, { lapsed: [lot(WINDOW)] })
    spreadWindowStart(lease, WINDOW + 10, 0.5)
    expect(lease.quietUntilMs).toBe(WINDOW + 100)
    const long = leaseOf(sliding, { lapsed: [lot(WINDOW)], horizonMs: 2_000 })
    spreadWindowStart(long, WINDOW + 10, 0.5)
    expect(long.quietUntilMs).toBe(WINDOW + 250)
  })

  it('asks at once when nothing lapsed at the start', () => {
    const lease = leaseOf(sliding, { lapsed: [lot(WINDOW - MINUTE)] })
    spreadWindowStart(lease, WINDOW + 10, 0.5)
    expect(lease.quietUntilMs).toBe(0)
  })
})

describe('lesseeState', () => {
  const decision = (remaining: number) => ({
    allowed: true,
    limit: 6_000,
    remaining,
    resetAtMs: WINDOW + MINUTE,
    retryAfterMs: 0,
  })

  const pacing = { spread: 0.25, scarceForWindow: true }

  it("is the lease's horizon, for a book with no tier below it", () => {
    const state = lesseeState(leaseOf(sliding), pacing, WINDOW)
    expect(state).toMatchObject({ horizonMs: 400, spread: 0.25, scarce: false })
    expect(state.aheadHorizonMs).toBeUndefined()
  })

  it("plans a regional object's batch by its least horizon while the key is not scarce, and times its asks ahead by it always", () => {
    const regional = { ...pacing, leastHorizonMs: 1_000, aheadHorizons: 2 }
    const roomy = lesseeState(leaseOf(sliding), regional, WINDOW)
    expect(roomy).toMatchObject({ horizonMs: 1_000, aheadHorizons: 2, aheadHorizonMs: 1_000 })
    // Scarce: what it held beyond its lessor's horizon would be room other regions lack.
    const scarce = lesseeState(leaseOf(sliding, { scarceUntilMs: WINDOW + 1 }), regional, WINDOW)
    expect(scarce).toMatchObject({ horizonMs: 400, scarce: true, aheadHorizonMs: 1_000 })
    // Nor once the root has room for fewer than 20 such stocks (10 units a second over 1 s).
    const room = (remaining: number) =>
      lesseeState(leaseOf(sliding, { snapshot: decision(remaining) }), regional, WINDOW).horizonMs
    expect(room(200)).toBe(1_000)
    expect(room(199)).toBe(400)
  })
})
