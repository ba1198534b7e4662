import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import fc from 'fast-check'
import { afterEach, describe, it, vi } from 'vitest'
import type { Policy } from '../../src/algorithms'
import { VERSION_OVERLAP_MS } from '../../src/algorithms/key-record'
import { isLeasable } from '../../src/algorithms/reserve'
import type { RateLimiterObject } from '../../src/limiter/rate-limiter-object'
import { expectWithinBound, type Admitted } from '../support/bounds'
import { freezeClock } from '../support/clock'

/** Seeded and bounded: the same cases on every run. */
const RUNS = { seed: 4_242, numRuns: 120 }

const limit = fc.integer({ min: 1, max: 20 })
const periodMs = fc.integer({ min: 50, max: 5_000 })
const penaltyMs = fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: undefined })

/** Any policy a rule may have, bar concurrency (its versions are drawn apart, below). */
const policy: fc.Arbitrary<Policy> = fc
  .record({
    kind: fc.constantFrom(
      'sliding-window',
      'fixed-window',
      'sliding-log',
      'token-bucket',
      'gcra',
      'leaky-bucket'
    ),
    limit,
    periodMs,
    burst: limit,
    penaltyMs,
  })
  .map(({ kind, limit, periodMs, burst, penaltyMs }): Policy => {
    const penalty = penaltyMs === undefined ? {} : { penaltyMs }
    switch (kind) {
      case 'token-bucket':
      case 'gcra':
      case 'leaky-bucket':
        return { algorithm: kind, limit, periodMs, burst, ...penalty }
      default:
        return { algorithm: kind as 'sliding-window', limit, periodMs, ...penalty }
    }
  })

/** Two versions of a concurrency limit: its limit and lease edited. */
const concurrencyPair = fc.tuple(limit, periodMs, limit, periodMs).map(([a, p, b, q]) =>
  [p, q].map((leaseMs, i): Policy => ({
    algorithm: 'concurrency',
    limit: i === 0 ? a : b,
    periodMs: leaseMs,
    queue: 0,
    maxWaitMs: 0,
  }))
)

/** A call: which version, how long after the one before (thousandths of a period), its cost. */
interface Call {
  version: number
  gap: number
  cost: number
}
const call: fc.Arbitrary<Call> = fc.record({
  version: fc.constantFrom(0, 1),
  gap: fc.oneof(fc.constant(0), fc.nat(100), fc.nat(1_500)),
  cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 6 })),
})

afterEach(() => {
  vi.useRealTimers()
})

let objects = 0

/** What one call admits (units) of the key's object, its clock at the call's time. */
type Take = (instance: RateLimiterObject, policy: Policy, cost: number, version: number) => number

/** A request charged as the exact path charges it (a concurrency limit: a slot a request). */
const charged: Take = (instance, policy, cost) => {
  const units = policy.algorithm === 'concurrency' ? 1 : cost
  return instance.charge(policy, units).allowed ? units : 0
}

/** A lessee's reservation of `cost` units (one at least), all spent at once when granted. */
const reserved: Take = (instance, policy, cost, version) =>
  isLeasable(policy)
    ? instance.reserve(policy, { units: cost, minUnits: 1, lessee: `lessee-${version}` }).granted
    : 0

/**
 * Runs the calls against a key's real object (its clock stopped at each call's time), and
 * returns what it admitted and when each version was in use: from its first call, while its
 * calls come within the time a version counts as in use of each other.
 */
async function drive(versions: Policy[], calls: Call[], take: Take = charged) {
  const startMs = freezeClock()
  const unitMs = Math.min(...versions.map((v) => v.periodMs)) / 1_000
  const admitted: (Admitted & { call: number })[] = []
  // Each stretch a version is in use: from its first call (by index: calls at one instant come
  // in order), until the time in use after its last.
  const spans: { version: number; from: number; untilMs: number }[] = []
  // Seen again no later than this after its last call, a version is still in use.
  const inUseMs = VERSION_OVERLAP_MS * 0.75
  await runInDurableObject(env.LIMITER.getByName(`versions-${objects++}`), (instance) => {
    let atMs = startMs
    calls.forEach(({ version, gap, cost }, call) => {
      atMs += Math.floor(gap * unitMs)
      vi.setSystemTime(atMs)
      const units = take(instance, versions[version]!, cost, version)
      if (units > 0) admitted.push({ atMs, cost: units, delayMs: 0, call })
      const span = spans.findLast((s) => s.version === version)
      if (span && atMs - span.untilMs <= inUseMs) span.untilMs = atMs
      else spans.push({ version, from: call, untilMs: atMs })
    })
  })
  return { admitted, spans, inUseMs }
}

/**
 * Each version's documented bound holds on what the key admitted while that version was in use
 * (from its first call of a stretch until the time in use after its last): every admission in
 * that time, whichever version's call it came from. A version that came later starts from what
 * the others had counted, so its windows are checked from its first call on.
 */
async function expectStricterHolds(versions: Policy[], calls: Call[], take: Take = charged) {
  const { admitted, spans, inUseMs } = await drive(versions, calls, take)
  for (const { version, from, untilMs } of spans)
    expectWithinBound(
      admitted.filter(({ call, atMs }) => call >= from && atMs <= untilMs + inUseMs),
      versions[version]!
    )
}

describe('two versions of a rule in use at once', () => {
  it('admit no more than either version allows, calls interleaved in any order and timing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(policy, policy),
        fc.array(call, { minLength: 1, maxLength: 120 }),
        async (versions, calls) => expectStricterHolds(versions, calls)
      ),
      RUNS
    )
  })

  it('admit no more than either version of a concurrency limit allows', async () => {
    await fc.assert(
      fc.asyncProperty(concurrencyPair, fc.array(call, { minLength: 1, maxLength: 80 }), (v, c) =>
        expectStricterHolds(v, c)
      ),
      { ...RUNS, numRuns: 40 }
    )
  })

  it('grant leases no version could not admit, granted units spent at once', async () => {
    const leasable = policy.filter(isLeasable)
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(leasable, leasable),
        fc.array(call, { minLength: 1, maxLength: 80 }),
        async (versions, calls) => expectStricterHolds(versions, calls, reserved)
      ),
      { ...RUNS, numRuns: 60 }
    )
  })
})
