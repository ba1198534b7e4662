import { describe, expect, it } from 'vitest'
import type { KeyRecord } from '../../../src/algorithms/key-record'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { horizonFor, SCARCE_ROOT_PACING } from '../../../src/limiter/leased/lease-sizing'
import { Lessees } from '../../../src/limiter/leased/lessees'
import type { LesseeAsk } from '../../../src/limiter/leased/reservation'
import { reserveAtRoot, type RootLessor } from '../../../src/limiter/leased/root-reserve'

const HOUR = 3_600_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 100, periodMs: HOUR }
const nowMs = 10 * HOUR + 60_000

/** A root that has heard from no lessee, is not short, and names its state `e1`. */
const newRoot = (): RootLessor => ({ lessees: new Lessees(), scarceUntilMs: 0, epoch: 'e1' })

/** The root's answer to `ask` (wanting nothing at least) on `record` at `atMs`. */
const reserve = (
  record: KeyRecord | undefined,
  ask: Partial<LesseeAsk> & { units: number },
  root: RootLessor,
  atMs = nowMs
) => reserveAtRoot(record, policy, { lessee: 'a', minUnits: 0, ...ask }, atMs, root)

describe("a root's reservation", () => {
  it('notes the lessee, charges the record it returns to write, and stamps the epoch it is given', () => {
    const root = newRoot()
    const first = reserve(undefined, { units: 10 }, root)
    expect(root.lessees.count(nowMs)).toBe(1)
    expect(first.reservation).toMatchObject({ granted: 10, chargedAtMs: nowMs, epoch: 'e1' })
    expect(first.scarceUntilMs).toBe(0)
    // The record written is what the next ask is charged against: 90 left.
    const second = reserve(first.record, { lessee: 'b', units: 5 }, root)
    expect(root.lessees.count(nowMs)).toBe(2)
    expect(second.reservation.decision.remaining).toBe(85)
  })

  it('finds the key short when it grants less than asked, and keeps it so for the horizon it gives', () => {
    const root = newRoot()
    const short = reserve(undefined, { units: 101 }, root)
    expect(short.reservation).toMatchObject({ granted: 100, scarce: true })
    expect(short.reservation.horizonMs).toBe(horizonFor(1, SCARCE_ROOT_PACING, HOUR))
    expect(short.scarceUntilMs).toBe(nowMs + short.reservation.horizonMs)
    // An ask for nothing finds no shortage: the key stays short until then, paced as such.
    const scarce = { ...root, scarceUntilMs: short.scarceUntilMs }
    const looked = reserve(short.record, { units: 0 }, scarce, nowMs + 1)
    expect(looked.scarceUntilMs).toBe(short.scarceUntilMs)
    expect(looked.reservation.horizonMs).toBe(horizonFor(1, SCARCE_ROOT_PACING, HOUR))
  })

  it('hands back with the ask only the units of the epoch it is given', () => {
    const root = newRoot()
    const full = reserve(undefined, { units: 101 }, root)
    const { validUntilMs } = full.reservation
    const returned = (epoch: string) => [
      { units: 30, chargedAtMs: nowMs, validFromMs: nowMs, validUntilMs, epoch },
    ]
    expect(
      reserve(full.record, { units: 50, returned: returned('e1') }, root).reservation.granted
    ).toBe(30)
    expect(
      reserve(full.record, { units: 50, returned: returned('e0') }, root).reservation.granted
    ).toBe(0)
  })
})
