import { runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { locationName, REGION_PREFIX } from '../../../src/limiter/leased/lease-calls'
import {
  GATHER_MS,
  OPENING_SPREAD_MS,
  REGIONAL_RATE_PER_S,
} from '../../../src/limiter/leased/location-lessor'
import { SimNamespace } from '../../../tools/scale/namespace'
import type { ServerObserver } from '../../../tools/scale/object-server'
import { VirtualClock } from '../../../tools/scale/virtual-time'
import { RateLimiterObject } from '../../../src/limiter/rate-limiter-object'
import {
  horizonFor,
  LOCATION_PACING,
  scarceWaitMs,
  SCARCE_ROOT_PACING,
  spreadOf,
} from '../../../src/limiter/leased/lease-sizing'
import { freezeClock } from '../../support/clock'
import { settle } from '../../support/virtual-clock'

const HOUR = 3_600_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 10, periodMs: HOUR }

/** Stops the clock just after an hour begins; the location object of `key` in one colo. */
function locationAtHourStart(key: string) {
  const startMs = freezeClock()
  const hourMs = Math.ceil(startMs / HOUR) * HOUR
  vi.setSystemTime(hourMs + 1_000)
  const lease = { ruleId: 'location-lessor', key: `location-lessor|${key}` }
  const name = locationName(lease.key, 'test-colo')
  return { hourMs, lease, name, location: env.LIMITER.getByName(name) }
}

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe("a fast key's regional tier", () => {
  const fast: LeasablePolicy = {
    algorithm: 'sliding-window',
    limit: 2 * REGIONAL_RATE_PER_S * 3_600,
    periodMs: HOUR,
  }

  it('leases through the region its isolate named: units the region holds were charged at the root', async () => {
    const { lease, location } = locationAtHourStart('fast')
    const root = env.LIMITER.getByName(lease.key)
    const region = env.LIMITER.getByName(locationName(lease.key, `${REGION_PREFIX}weur`))
    const first = await location.sublease(lease, fast, {
      lessee: 'isolate-1',
      units: 50,
      minUnits: 1,
      region: 'weur',
    })
    expect(first.granted).toBe(50)
    const charged = fast.limit - (await root.charge(fast, 0)).remaining
    expect(charged).toBeGreaterThanOrEqual(50)
    // Another location of the region is served from what the region holds: the root's count
    // does not move, and never falls short of what the tiers below hold.
    const other = await region.sublease(lease, fast, {
      lessee: 'location-2',
      units: 10,
      minUnits: 1,
    })
    expect(other.granted).toBe(10)
    expect(fast.limit - (await root.charge(fast, 0)).remaining).toBe(charged)
    expect(charged).toBeGreaterThanOrEqual(60)
  })
})

describe("a location's object", () => {
  it('sub-leases what it leased from the root, and tells isolates it turns away when it refills', async () => {
    const { lease, name, location } = locationAtHourStart('k')
    const ask = (lessee: string, units: number) =>
      location.sublease(lease, policy, { lessee, units, minUnits: 1 })

    // The root has 10: all of it goes to the location, which gives the isolate what it asked.
    const first = await ask('isolate-1', 4)
    expect(first).toMatchObject({ granted: 4, scarce: false })
    // More than it holds: the 6 it has, short of room (the root said so), and when it refills.
    const second = await ask('isolate-2', 100)
    expect(second.granted).toBe(6)
    expect(second.scarce).toBe(true)
    // And its isolates hear that the root is short: out of units, they deny rather than wait.
    expect(second.rootShort).toBe(true)
    // Two isolates, on a key the root said is short: they ask every 100 ms.
    expect(second.horizonMs).toBe(100)
    const quietMs = scarceWaitMs(horizonFor(1, SCARCE_ROOT_PACING), spreadOf(name))
    const spreadMs = (spreadOf('isolate-2') * 0.25 * 2 * 1000) / LOCATION_PACING.callsPerSecond
    expect(second.refillInMs).toBeCloseTo(quietMs + spreadMs, 2)
    // Nothing left, and the root not asked again before then: denied, with the same news.
    const third = await ask('isolate-2', 1)
    expect(third).toMatchObject({ granted: 0, scarce: true })
    expect(third.refillInMs).toBeCloseTo(second.refillInMs!, 2)
    // The root's count: every unit the location handed out was charged there first.
    const root = await env.LIMITER.getByName(lease.key).charge(policy, 0)
    expect(root.remaining).toBe(0)
  })

  it("has its isolates ask about once a second while the root has half the key's room left", async () => {
    const { lease, location } = locationAtHourStart('roomy')
    const roomy: LeasablePolicy = { ...policy, limit: 1_000 }
    const ask = (lessee: string, units: number) =>
      location.sublease(lease, roomy, { lessee, units, minUnits: units })
    expect((await ask('isolate-1', 10)).horizonMs).toBe(1_000)
    // The root has less than half left: the usual pace, though this object still holds units.
    const past = await ask('isolate-2', 600)
    expect(past).toMatchObject({ granted: 600, scarce: false })
    expect(past.horizonMs).toBe(LOCATION_PACING.minHorizonMs)
    expect(LOCATION_PACING.minHorizonMs).toBeLessThan(1_000)
  })

  it("gives a new isolate a batch at its location's mean demand, not its first request's cost", async () => {
    const { lease, location } = locationAtHourStart('newcomer')
    const roomy: LeasablePolicy = { ...policy, limit: 100_000 }
    const ask = (lessee: string, units: number, ratePerMs?: number) =>
      location.sublease(lease, roomy, {
        lessee,
        units,
        minUnits: 1,
        ...(ratePerMs === undefined ? {} : { ratePerMs }),
      })
    // Two isolates at 0.1 and 0.3 a ms: a mean of 0.2, over one and a half 1 s horizons.
    await ask('isolate-1', 150, 0.1)
    await ask('isolate-2', 450, 0.3)
    expect((await ask('isolate-3', 1)).granted).toBe(300)
    // One that has measured its demand gets what it asks for.
    expect((await ask('isolate-1', 1, 0.1)).granted).toBe(1)
  })

  it('keeps its units between the asks of an isolate that calls once in its longest horizon', async () => {
    const { lease, location } = locationAtHourStart('between-asks')
    const ask = (units: number) =>
      location.sublease(lease, policy, { lessee: 'isolate-1', units, minUnits: 1, ratePerMs: 0.01 })
    const handedBack = vi.spyOn(RateLimiterObject.prototype, 'refund')
    // The isolate's demand has the location lease more than the isolate takes.
    expect((await ask(4)).granted).toBe(4)
    // Its next ask, a longest horizon later, finds them still there: none went back to the
    // root in between (where the location would have dropped what it measured, too).
    vi.setSystemTime(Date.now() + LOCATION_PACING.maxHorizonMs)
    expect((await ask(1)).granted).toBe(1)
    await env.LIMITER.getByName(lease.key).charge(policy, 0)
    expect(handedBack).not.toHaveBeenCalled()
  })

  it('hands on to the root, with its next ask, what lapsed unspent at a sliding window end', async () => {
    const { hourMs, lease, location } = locationAtHourStart('lapsed')
    const ask = (units: number) =>
      location.sublease(lease, policy, { lessee: 'isolate-1', units, minUnits: 1 })
    // The location leases all 10 and the isolate takes 4; none of them is spent this hour.
    const held = await ask(4)
    expect(held.granted).toBe(4)
    // Half an hour into the next one, the 10 charged would weigh 5: room for 5 only. The
    // isolate hands its 4 back as lapsed; the location's own 6 lapsed too. With the next ask
    // they go back to the root, and the hour's 10 are room again.
    vi.setSystemTime(hourMs + HOUR + HOUR / 2)
    const { granted, chargedAtMs, validUntilMs, epoch } = held
    await location.subrefund(lease, policy, {
      units: 4,
      chargedAtMs,
      validFromMs: chargedAtMs,
      validUntilMs,
      epoch,
    })
    expect(granted).toBe(4)
    expect((await ask(100)).granted).toBe(10)
  })

  it("passes its isolates' spent bucket tokens on to the root, which stops holding them", async () => {
    const startMs = freezeClock()
    vi.setSystemTime(startMs)
    const bucket: LeasablePolicy = {
      algorithm: 'token-bucket',
      limit: 3_600,
      periodMs: HOUR,
      burst: 20,
    }
    const lease = { ruleId: 'location-lessor', key: 'location-lessor|spent' }
    const location = env.LIMITER.getByName(locationName(lease.key, 'test-colo'))
    const root = env.LIMITER.getByName(lease.key)
    const heldAtRoot = () =>
      runInDurableObject(root, (_instance, state) => {
        const stored = state.storage.kv.get<{ state: { state: { held?: [number, number][] } } }>(
          'state'
        )
        return (stored?.state.state.held ?? []).reduce((sum, [, units]) => sum + units, 0)
      })
    const first = await location.sublease(lease, bucket, {
      lessee: 'isolate-1',
      units: 5,
      minUnits: 1,
    })
    expect(first.granted).toBe(5)
    const leased = await heldAtRoot()
    expect(leased).toBeGreaterThanOrEqual(5)
    // The isolate spent its 5 and says so with its next ask, which needs more than the location
    // holds: the location asks the root, and passes the report on.
    vi.setSystemTime(startMs + 500)
    const { chargedAtMs, validUntilMs, epoch } = first
    const spent = [{ units: 5, chargedAtMs, validFromMs: chargedAtMs, validUntilMs, epoch }]
    const second = await location.sublease(lease, bucket, {
      lessee: 'isolate-1',
      units: 100,
      minUnits: leased - 4,
      spent,
    })
    // Every token the root still holds is one the isolate holds unspent: not the 5 spent.
    expect(await heldAtRoot()).toBe(second.granted)
  })

  it('shares its call to the root with the isolates that came while it travelled, none waiting for another', async () => {
    const { lease, location } = locationAtHourStart('behind')
    const roomy: LeasablePolicy = { ...policy, limit: 1_000 }
    const reserve = vi.spyOn(RateLimiterObject.prototype, 'reserve')
    const ask = (lessee: string) =>
      location.sublease(lease, roomy, { lessee, units: 50, minUnits: 1, ratePerMs: 1e-4 })
    // Three isolates at once (batches of 50, though their demand has the location hold nothing
    // of its own): the call is for the first one's batch, and the two that came while it
    // travelled share it by what each wants rather than wait for a call of their own.
    const answers = await Promise.all([ask('isolate-1'), ask('isolate-2'), ask('isolate-3')])
    expect(answers.map((answer) => answer.granted)).toEqual([16, 17, 17])
    expect(reserve).toHaveBeenCalledTimes(1)
    expect(reserve.mock.calls[0]![1].units).toBe(50)
  })

  it('just started and asked by isolates that just started (a deploy), tells them to ask again at its own point of its first moments, then calls the root once for all of them', async () => {
    // In the scale simulator's virtual time (the same classes; its timers wait for nothing).
    const T0 = 1_800_000_000_000
    const clock = new VirtualClock(T0)
    const rootCalls: number[] = []
    const observer: ServerObserver = {
      arrived: (name, atMs) => void (name.includes('@') ? undefined : rootCalls.push(atMs)),
      overloaded: () => undefined,
      started: () => undefined,
    }
    // Every object 1 ms from every caller.
    const here = { oneWayMs: () => 1, hintLocation: () => 0 }
    const namespace = new SimNamespace(
      clock,
      here,
      RateLimiterObject,
      { serviceMs: 1, queueBound: 100 },
      observer
    )
    const roomy: LeasablePolicy = { ...policy, limit: 1_000 }
    const restore = clock.install()
    try {
      // A key whose location object opens well into its first moments.
      const keys = Array.from({ length: 20 }, (_, i) => `location-lessor|deploy-${i}`)
      const key = keys.find((k) => spreadOf(locationName(k, 'colo')) > 0.3)!
      const openingMs = spreadOf(locationName(key, 'colo')) * OPENING_SPREAD_MS
      const lease = { ruleId: 'location-lessor', key }
      const ask = (name: string, lessee: string, starting?: true) =>
        (
          namespace.view(0).getByName(name) as unknown as DurableObjectStub<RateLimiterObject>
        ).sublease(lease, roomy, {
          lessee,
          units: 3,
          minUnits: 1,
          budgetMs: 1_000,
          ...(starting ? { starting } : {}),
        })
      const location = locationName(key, 'colo')
      const isolates = ['isolate-1', 'isolate-2', 'isolate-3']
      // Told at once to ask again at its opening: none of them has measured its demand yet.
      const told = Promise.all(isolates.map((id) => ask(location, id, true)))
      await settle(clock)
      for (const { granted, opensInMs } of await told) {
        expect(granted).toBe(0)
        // Its opening, from when the object (serving a call a millisecond) answered each.
        expect(opensInMs).toBeGreaterThan(openingMs - 4)
        expect(opensInMs).toBeLessThan(openingMs + 0.01)
      }
      expect(rootCalls).toEqual([])
      // Asked again then (each wants 3): one call for the three, once the asks made at the
      // opening are gathered (1 ms in, the opening, the gathering, 1 ms out).
      const answers = new Promise<void>((resolve) => clock.after(openingMs + 1, resolve)).then(() =>
        Promise.all(isolates.map((id) => ask(location, id, true)))
      )
      await settle(clock)
      expect((await answers).map((answer) => answer.granted)).toEqual([3, 3, 3])
      // (Later, it hands back what the root granted beyond that: a deploy's first grants are
      // larger than asked.)
      expect(rootCalls.filter((atMs) => atMs < T0 + 1_000)).toHaveLength(1)
      expect(rootCalls[0]).toBeGreaterThanOrEqual(T0 + 1 + openingMs + GATHER_MS + 1)
      expect(rootCalls[0]).toBeLessThan(T0 + 1 + openingMs + GATHER_MS + 1 + 1)
      // A key's first request from an isolate running for a while: the root is asked at once.
      const other = { ...lease, key: 'location-lessor|alone' }
      const sentMs = Date.now()
      const alone = (
        namespace
          .view(0)
          .getByName(
            locationName(other.key, 'colo')
          ) as unknown as DurableObjectStub<RateLimiterObject>
      ).sublease(other, roomy, { lessee: 'isolate-4', units: 1, minUnits: 1, budgetMs: 1_000 })
      await settle(clock)
      expect((await alone).granted).toBe(1)
      expect(rootCalls.at(-1)).toBe(sentMs + 2)
    } finally {
      restore()
    }
  })

  it('has a few isolates ask more often while the root says the key is short, less as they grow in number', async () => {
    const { lease, location } = locationAtHourStart('few')
    const ask = (lessee: string) =>
      location.sublease(lease, policy, { lessee, units: 100, minUnits: 1, ratePerMs: 0.1 })
    // The first ask takes the key's 10 and hears it is short; the others find none left. Each
    // asks every 100 ms while there are up to four, then 25 ms later for each more, up to the
    // usual shortest.
    const horizons: number[] = []
    for (let i = 1; i <= 12; i++) horizons.push((await ask(`isolate-${i}`)).horizonMs)
    expect(horizons).toEqual([100, 100, 100, 100, 125, 150, 175, 200, 225, 250, 250, 250])
    expect(LOCATION_PACING.minHorizonMs).toBe(250)
  })
})
