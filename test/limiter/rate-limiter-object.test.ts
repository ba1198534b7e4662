import { env } from 'cloudflare:workers'
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it, vi } from 'vitest'
import type { Policy } from '../../src/algorithms'
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { alarmJitterMs, MAX_ALARM_JITTER_MS } from '../../src/limiter/alarm-jitter'
import { horizonFor, ROOT_PACING, SCARCE_ROOT_PACING } from '../../src/limiter/leased/lease-sizing'
import { RateLimiterObject } from '../../src/limiter/rate-limiter-object'
import { freezeClock } from '../support/clock'

const hourly: Policy = { algorithm: 'sliding-window', limit: 100, periodMs: 3_600_000 }
const bucket: Policy = { algorithm: 'token-bucket', limit: 100, periodMs: 3_600_000, burst: 100 }

type Stored = { algorithm: string; periodMs: number; state: unknown; expiresAtMs: number }

const storedState = (stub: DurableObjectStub<RateLimiterObject>) =>
  runInDurableObject(stub, (_instance, state) => state.storage.kv.get<Stored>('state'))

describe('RateLimiterObject', () => {
  it.each([hourly, bucket])(
    'admits exactly the limit of 500 concurrent calls (%o)',
    async (policy) => {
      const stub = env.LIMITER.getByName(`concurrent-${policy.algorithm}`)
      const decisions = await Promise.all(Array.from({ length: 500 }, () => stub.charge(policy, 1)))
      expect(decisions.filter((d) => d.allowed)).toHaveLength(100)
      expect(
        decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.retryAfterMs > 0)
      ).toBe(true)
    }
  )

  it("stores state with its expiry and arms one alarm for it, the key's offset after", async () => {
    const stub = env.LIMITER.getByName('stores')
    const decision = await stub.charge(hourly, 1)
    const stored = await storedState(stub)
    expect(stored).toMatchObject({
      algorithm: 'sliding-window',
      periodMs: 3_600_000,
      expiresAtMs: decision.resetAtMs,
    })
    const alarm = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())
    expect(alarm).toBe(decision.resetAtMs + alarmJitterMs('stores', hourly.periodMs))
  })

  it('arms no second alarm in an instance created after an eviction: the record names the one set', async () => {
    const stub = env.LIMITER.getByName('evicted')
    const first = await stub.charge(hourly, 1)
    const armedAtMs = first.resetAtMs + alarmJitterMs('evicted', hourly.periodMs)
    const result = await runInDurableObject(stub, (_instance, state) => {
      // A fresh instance over the same storage: what the runtime builds after an eviction.
      const fresh = new RateLimiterObject(state, env)
      const alarm = vi.spyOn(state.storage, 'setAlarm')
      try {
        const decision = fresh.charge(hourly, 1)
        return { remaining: decision.remaining, alarms: alarm.mock.calls.length }
      } finally {
        vi.restoreAllMocks()
      }
    })
    expect(result).toEqual({ remaining: 98, alarms: 0 })
    expect(await storedState(stub)).toMatchObject({ alarmAtMs: armedAtMs })
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBe(armedAtMs)
  })

  it('does not write on a denied request', async () => {
    const stub = env.LIMITER.getByName('denied-no-write')
    const tiny: Policy = { ...hourly, limit: 1 }
    // Watch the object's own storage calls: a rewrite of the same record counts as a write.
    const writes = await runInDurableObject(stub, (instance, state) => {
      const put = vi.spyOn(state.storage.kv, 'put')
      const alarm = vi.spyOn(state.storage, 'setAlarm')
      const count = () => put.mock.calls.length + alarm.mock.calls.length
      try {
        const allowed = instance.charge(tiny, 1)
        const afterAllowed = count()
        const denied = instance.charge(tiny, 1)
        return { allowed: allowed.allowed, denied: denied.allowed, afterAllowed, total: count() }
      } finally {
        vi.restoreAllMocks()
      }
    })
    expect(writes).toEqual({ allowed: true, denied: false, afterAllowed: 2, total: 2 })
  })

  it('keeps a key that is still active when its alarm fires early, and re-arms', async () => {
    const stub = env.LIMITER.getByName('alarm-early')
    const decision = await stub.charge(hourly, 1)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    expect(await storedState(stub)).toBeDefined()
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBe(
      decision.resetAtMs + alarmJitterMs('alarm-early', hourly.periodMs)
    )
    expect((await stub.charge(hourly, 1)).remaining).toBe(98)
  })

  it('deletes the state of an idle key when its alarm fires', async () => {
    const stub = env.LIMITER.getByName('alarm-idle')
    await stub.charge(hourly, 1)
    // Make the key idle: its stored expiry is now in the past.
    await runInDurableObject(stub, (_i, state) => {
      const stored = state.storage.kv.get<Stored>('state')!
      state.storage.kv.put('state', { ...stored, expiresAtMs: Date.now() - 1 })
    })
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    expect(await storedState(stub)).toBeUndefined()
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBeNull()
    expect(await runDurableObjectAlarm(stub)).toBe(false)
    // A new request after clean-up starts from a full quota.
    expect((await stub.charge(hourly, 1)).remaining).toBe(99)
  })

  it('cleans an idle key up with one row delete, not a whole-database delete', async () => {
    const stub = env.LIMITER.getByName('alarm-cheap')
    await stub.charge(hourly, 1)
    const calls = await runInDurableObject(stub, async (instance, state) => {
      const stored = state.storage.kv.get<Stored>('state')!
      state.storage.kv.put('state', { ...stored, expiresAtMs: Date.now() - 1 })
      const deleteAll = vi.spyOn(state.storage, 'deleteAll')
      const remove = vi.spyOn(state.storage.kv, 'delete')
      try {
        await instance.alarm()
        return { deleteAll: deleteAll.mock.calls.length, delete: remove.mock.calls.length }
      } finally {
        vi.restoreAllMocks()
      }
    })
    expect(calls).toEqual({ deleteAll: 0, delete: 1 })
    expect(await storedState(stub)).toBeUndefined()
    expect((await stub.charge(hourly, 1)).remaining).toBe(99)
  })

  it("spreads keys' alarms over their period (at most a minute), each key at a fixed offset", () => {
    const offsets = Array.from({ length: 2_000 }, (_, i) => alarmJitterMs(`r|10.0.${i}`, 20_000))
    expect(offsets.every((ms) => Number.isInteger(ms) && ms >= 0 && ms < 20_000)).toBe(true)
    expect(new Set(offsets).size).toBeGreaterThan(1_800)
    // Roughly even: every tenth of the period holds some.
    const tenths = new Set(offsets.map((ms) => Math.floor(ms / 2_000)))
    expect(tenths.size).toBe(10)
    expect(alarmJitterMs('r|10.0.7', 20_000)).toBe(offsets[7])
    const hourlyOffsets = offsets.map((_, i) => alarmJitterMs(`r|10.0.${i}`, 3_600_000))
    expect(Math.max(...hourlyOffsets)).toBeLessThan(MAX_ALARM_JITTER_MS)
    expect(Math.max(...hourlyOffsets)).toBeGreaterThan(MAX_ALARM_JITTER_MS * 0.9)
  })

  it('reset() forgets the key', async () => {
    const stub = env.LIMITER.getByName('reset')
    await stub.charge({ ...hourly, limit: 1 }, 1)
    await stub.reset()
    expect((await stub.charge({ ...hourly, limit: 1 }, 1)).allowed).toBe(true)
  })

  it('as a root, has a lessee ask about once a second while the key has half its room left', async () => {
    const policy: LeasablePolicy = { ...hourly, limit: 1_000 }
    const stub = env.LIMITER.getByName('root-roomy')
    const ask = (units: number) =>
      stub.reserve(policy, { lessee: 'location-a', units, minUnits: 0 })
    // 990 of 1,000 left, then 590: a second, not the usual pace for one lessee.
    expect((await ask(10)).horizonMs).toBe(1_000)
    expect(horizonFor(1, ROOT_PACING)).toBeLessThan(1_000)
    expect((await ask(400)).horizonMs).toBe(1_000)
    // 490 left, under half: the usual pace again, before the key runs short.
    const past = await ask(100)
    expect(past).toMatchObject({ granted: 100, scarce: false })
    expect(past.decision.remaining).toBe(490)
    expect(past.horizonMs).toBe(horizonFor(1, ROOT_PACING))
  })

  it.each(['sliding-window', 'fixed-window'] as const)(
    'as a root, paces its lessees more tightly while short of room, and charges a %s ahead accordingly',
    async (algorithm) => {
      const HOUR = 3_600_000
      const policy: LeasablePolicy = { algorithm, limit: 1_000, periodMs: HOUR }
      const stub = env.LIMITER.getByName(`root-pacing-${algorithm}`)
      const hourMs = Math.ceil(freezeClock() / HOUR) * HOUR
      try {
        const lessees = Array.from({ length: 400 }, (_, i) => `location-${i}`)
        const ask = (lessee: string, units: number, nextUnits = 0) =>
          stub.reserve(policy, { lessee, units, minUnits: 0, nextUnits })
        // 800 spent in the previous hour; 400 lessees, with room for all: the usual pace.
        vi.setSystemTime(hourMs - 1_000)
        await ask('previous', 800)
        vi.setSystemTime(hourMs + 0.9 * HOUR)
        for (const lessee of lessees.slice(0, -1)) await ask(lessee, 1)
        const roomy = await ask(lessees.at(-1)!, 1)
        expect(roomy.horizonMs).toBe(horizonFor(400, ROOT_PACING))
        // An ask larger than the room takes the rest of it: short of room, and a tighter pace.
        const short = await ask(lessees[0]!, 5_000)
        expect(short.scarce).toBe(true)
        const next = await ask(lessees[1]!, 1, 10)
        expect(next.horizonMs).toBe(horizonFor(400, SCARCE_ROOT_PACING))
        expect(next.horizonMs).toBeLessThan(roomy.horizonMs)
        // The next window has room (the previous hour's 800 weigh 80 now, nothing then), but a
        // sliding window's room ahead is room this one regains: not charged. A fixed window's is.
        expect(next.next === undefined).toBe(algorithm === 'sliding-window')
      } finally {
        vi.useRealTimers()
      }
    }
  )

  it('as a root, grants a starting lessee eight times its ask while the key keeps half its room', async () => {
    const policy: LeasablePolicy = { ...hourly, limit: 10_000 }
    const stub = env.LIMITER.getByName('root-starting')
    const ask = (units: number, starting?: true) =>
      stub.reserve(policy, {
        lessee: 'location-a',
        units,
        minUnits: 1,
        ...(starting ? { starting } : {}),
      })
    expect((await ask(100, true)).granted).toBe(800)
    // Not once it has started.
    expect((await ask(3_400)).granted).toBe(3_400)
    // 5,800 left: eight times 100 leaves half.
    expect((await ask(100, true)).granted).toBe(800)
    // 5,000 left: eight times 100 would leave less than half, so the ask as it is.
    expect((await ask(100, true)).granted).toBe(100)
    // A bucket's held tokens are taken from its burst: no more than asked.
    const tokens: LeasablePolicy = { ...bucket, limit: 1_000, burst: 1_000 }
    const root = env.LIMITER.getByName('root-starting-bucket')
    const first = await root.reserve(tokens, {
      lessee: 'location-a',
      units: 10,
      minUnits: 1,
      starting: true,
    })
    expect(first.granted).toBe(10)
  })

  it('as a root short of room, answers an ask ahead with the next window’s ramp, in its epoch', async () => {
    const MINUTE = 60_000
    const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000, periodMs: MINUTE }
    const stub = env.LIMITER.getByName('root-ramp')
    const minuteMs = Math.ceil(freezeClock() / MINUTE) * MINUTE
    try {
      vi.setSystemTime(minuteMs - 10_000)
      const full = await stub.reserve(policy, { lessee: 'a', units: 6_001, minUnits: 0 })
      expect(full.scarce).toBe(true)
      vi.setSystemTime(minuteMs - 2_000)
      const ahead = await stub.reserve(policy, {
        lessee: 'b',
        units: 10,
        minUnits: 0,
        nextUnits: 1_000,
        nextWindowMs: minuteMs,
      })
      expect(ahead.granted).toBe(0)
      expect(ahead.next).toBeUndefined()
      // 100 a second come back as the full minute slides out: 5 per 50 ms over the ramp's 2 s.
      expect(ahead.ramp?.map((lot) => lot.granted)).toEqual(new Array(40).fill(5))
      expect(ahead.ramp?.[0]).toMatchObject({
        validFromMs: minuteMs + 50,
        epoch: full.epoch,
      })
    } finally {
      vi.useRealTimers()
    }
  })

  it.each([
    ['its epoch', true, 64],
    ['another epoch (the key was reset since)', false, 10],
  ] as const)(
    'as a root, takes back with an ask what lapsed unspent at a sliding window end, charged in %s',
    async (_name, sameEpoch, granted) => {
      const HOUR = 3_600_000
      const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 100, periodMs: HOUR }
      const stub = env.LIMITER.getByName(`root-lapsed-${String(sameEpoch)}`)
      const hourMs = Math.ceil(freezeClock() / HOUR) * HOUR
      try {
        vi.setSystemTime(hourMs - 1_000)
        const full = await stub.reserve(policy, { lessee: 'here', units: 101, minUnits: 0 })
        expect(full.granted).toBe(100)
        // A tenth into the next hour, the previous hour's 100 weigh 90: room for 10. Of them, 60
        // lapsed unspent: handed back, 40 weigh 36, and 64 fit.
        vi.setSystemTime(hourMs + 0.1 * HOUR)
        const returned = [
          {
            units: 60,
            chargedAtMs: full.chargedAtMs,
            validFromMs: full.chargedAtMs,
            validUntilMs: full.validUntilMs,
            epoch: sameEpoch ? full.epoch : 'before-a-reset',
          },
        ]
        const ask = { lessee: 'here', units: 100, minUnits: 0, returned }
        expect((await stub.reserve(policy, ask)).granted).toBe(granted)
      } finally {
        vi.useRealTimers()
      }
    }
  )
})
