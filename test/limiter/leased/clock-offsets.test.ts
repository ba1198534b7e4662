import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import type { LimiterNamespace } from '../../../src/limiter/client'
import { Clocks, type MachineKind } from '../../../tools/scale/clocks'
import { objectClass } from '../../../tools/scale/limiter-adapter'
import { SimNamespace } from '../../../tools/scale/namespace'
import { oracleFor } from '../../../tools/scale/oracle'
import { VirtualClock } from '../../../tools/scale/virtual-time'
import { settle } from '../../support/virtual-clock'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000
const COST = 10
/** 200 units a second: leased through the location's object (`leasesFromRoot`). */
const policies: LeasablePolicy[] = [
  { algorithm: 'fixed-window', limit: 12_000, periodMs: MINUTE },
  { algorithm: 'sliding-window', limit: 12_000, periodMs: MINUTE },
  { algorithm: 'token-bucket', limit: 12_000, periodMs: MINUTE, burst: 2_000 },
  { algorithm: 'gcra', limit: 12_000, periodMs: MINUTE, burst: 2_000 },
]

/**
 * Four isolates of one location, asking at 30 × the limit's rate across a window's end (600
 * requests a second of 10 units each), in the
 * scale simulator's virtual time, every hop 10 ms. Each machine of `offKind` reads its clock
 * `offMs` away from the true time. What the exact limit refuses of what was admitted, judged by
 * the root's clock; and how much was admitted.
 */
async function overAdmitted(policy: LeasablePolicy, offKind: MachineKind, offMs: number) {
  const startMs = 1_800_000_000_000 + MINUTE - 3_000
  const clock = new VirtualClock(startMs)
  const clocks = new Clocks(
    { skewMs: offMs, fixed: true, driftPpm: 0, skewOn: [offKind] },
    1,
    startMs
  )
  const clockOf = (name: string) => clocks.ofObject(name)
  const namespace = new SimNamespace(
    clock,
    { oneWayMs: () => 10, hintLocation: () => 0 },
    objectClass(clockOf),
    { serviceMs: 1, queueBound: 100, clockOf },
    { arrived: () => undefined, overloaded: () => undefined, started: () => undefined }
  )
  const view = namespace.view(0) as unknown as LimiterNamespace
  const call = {
    rule: { id: 'skew' },
    key: 'skew',
    policy,
    cost: COST,
    failMode: 'closed' as const,
  }
  const books = Array.from({ length: 4 }, (_, i) => {
    const isolate = clocks.of('isolate', String(i))
    return leaseBook({ id: `isolate-${i}`, location: 'colo', now: () => isolate.read(Date.now()) })
  })
  const rootClock = clocks.ofObject(call.key)
  const admitted: number[] = []
  const restore = clock.install()
  try {
    // 600 a second for 6 s, one isolate after another.
    for (let i = 0; i < 3_600; i++)
      clock.at(startMs + Math.floor(i * (10 / 6)), () => {
        const arrivedMs = Date.now()
        void Promise.resolve(books[i % books.length]!.charge(view, call, 1_000)).then((result) => {
          if (result.enforced && result.decision.allowed)
            admitted.push(result.decidedAtMs ?? rootClock.read(arrivedMs))
        })
      })
    await settle(clock)
  } finally {
    restore()
  }
  const oracle = oracleFor(policy)
  const over = admitted.sort((a, b) => a - b).filter((atMs) => !oracle.admit(atMs, COST)).length
  return { over, admitted: admitted.length * COST }
}

describe('clocks that disagree', () => {
  it.each(
    policies.flatMap((policy) =>
      (['location', 'isolate', 'root'] as const).flatMap((kind) =>
        [300, -300, 1_000].map((offMs) => [policy.algorithm, kind, offMs, policy] as const)
      )
    )
  )(
    '%s: no over-admission with the %s clocks %i ms off',
    { timeout: 60_000 },
    async (_algorithm, kind, offMs, policy) => {
      const { over, admitted } = await overAdmitted(policy, kind, offMs)
      expect(over).toBe(0)
      // The rest of the window and the next one's start (a bucket's burst and 200 a second).
      expect(admitted).toBeGreaterThan(3_000)
    }
  )
})
