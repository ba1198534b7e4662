import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { chargeKey, withMoreIn, type KeyState, type Policy } from '../../src/algorithms'

/** Seeded and bounded: the same cases on every run. */
const RUNS = { seed: 44, numRuns: 120 }

/** Every algorithm with a window or a rate, each with and without the penalty box. */
const base: Policy[] = [
  { algorithm: 'sliding-window', limit: 5, periodMs: 1_000 },
  { algorithm: 'fixed-window', limit: 5, periodMs: 1_000 },
  { algorithm: 'sliding-log', limit: 5, periodMs: 1_000 },
  { algorithm: 'token-bucket', limit: 5, periodMs: 1_000, burst: 8 },
  { algorithm: 'gcra', limit: 5, periodMs: 1_000, burst: 3 },
  { algorithm: 'leaky-bucket', limit: 5, periodMs: 1_000, burst: 4 },
  { algorithm: 'leaky-bucket', limit: 5, periodMs: 1_000, burst: 4, shape: true, maxWaitMs: 300 },
]
const policies: Policy[] = base.flatMap((policy) => [policy, { ...policy, penaltyMs: 1_500 }])

const arrivals = fc.array(
  fc.record({ gapMs: fc.oneof(fc.constant(0), fc.nat(50), fc.nat(1_500)), cost: fc.nat(3) }),
  { minLength: 1, maxLength: 60 }
)

describe('when more than `remaining` units come (RateLimit t, draft-11)', () => {
  it.each(
    policies.map(
      (policy) =>
        [
          `${policy.algorithm}${policy.penaltyMs ? ' + penalty' : ''}${'shape' in policy && policy.shape ? ' (shaper)' : ''}`,
          policy,
        ] as const
    )
  )(
    '%s: a request of remaining + 1 units passes at moreInMs and not a ms before',
    (_name, policy) => {
      fc.assert(
        fc.property(arrivals, (sequence) => {
          let key: KeyState | undefined
          let nowMs = 1_700_000_000_000
          for (const { gapMs, cost } of sequence) {
            nowMs += gapMs
            const { state, decision } = chargeKey(key, policy, nowMs, cost)
            key = state
            const told = withMoreIn(decision, key, policy, nowMs)
            const wanted = told.remaining + 1
            const passes = (atMs: number) => chargeKey(key, policy, atMs, wanted).decision.allowed
            if (told.moreInMs === undefined) {
              // A full quota, or a shaper's room that its wait bounds.
              expect(told.remaining >= told.limit || policy.algorithm === 'leaky-bucket').toBe(true)
              continue
            }
            expect(told.moreInMs).toBeGreaterThan(0)
            expect(passes(nowMs + told.moreInMs)).toBe(true)
            expect(passes(nowMs + told.moreInMs - 1)).toBe(false)
            // At r=0 after a denial of one unit, t is the denial's own wait: its Retry-After.
            if (!decision.allowed && cost === 1) expect(told.moreInMs).toBe(decision.retryAfterMs)
          }
        }),
        RUNS
      )
    }
  )

  it('says nothing of a concurrency limit: slots come back when requests end', () => {
    const policy: Policy = {
      algorithm: 'concurrency',
      limit: 1,
      periodMs: 60_000,
      queue: 0,
      maxWaitMs: 0,
    }
    const { state, decision } = chargeKey(undefined, policy, 0, 1)
    expect(withMoreIn(decision, state, policy, 0).moreInMs).toBeUndefined()
  })
})
