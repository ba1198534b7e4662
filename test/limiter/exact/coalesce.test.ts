import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it, vi } from 'vitest'
import type { Policy } from '../../../src/algorithms'
import { LimiterUnavailableError } from '../../../src/errors'
import { charge } from '../../../src/limiter/client'
import { Coalescer, MAX_LINGER_MS } from '../../../src/limiter/exact/coalesce'
import { LimiterIsolate } from '../../../src/limiter/isolate'
import { chargeCalls, flaky } from '../../support/charge-calls'

const window100: Policy = { algorithm: 'sliding-window', limit: 100, periodMs: 3_600_000 }
const call = chargeCalls('co', window100)

describe('coalescing: concurrent requests for one key go as one call', () => {
  it('admits exactly 100 of 500 concurrent requests with a handful of calls', async () => {
    const isolate = new LimiterIsolate()
    const results = await Promise.all(
      Array.from({ length: 500 }, () => charge(env.LIMITER, call('exact-500'), 5_000, isolate))
    )
    const allowed = results.filter((r) => r.enforced && r.decision.allowed)
    expect(allowed).toHaveLength(100)
    expect(results.every((r) => r.enforced)).toBe(true)
    const stats = isolate.stats.snapshot()
    // One call alone, then the 499 that queued behind it as one batch.
    expect(stats.durableObjectCalls).toBeLessThanOrEqual(3)
    expect(stats.decisions.durableObject + stats.decisions.local).toBe(500)
    expect(isolate.lanes.lanes).toBe(0)
  })

  it('stays exact across several isolates charging one key at once', async () => {
    const isolates = Array.from({ length: 4 }, () => new LimiterIsolate())
    const results = await Promise.all(
      isolates.flatMap((isolate) =>
        Array.from({ length: 150 }, () => charge(env.LIMITER, call('exact-4x150'), 5_000, isolate))
      )
    )
    expect(results.filter((r) => r.enforced && r.decision.allowed)).toHaveLength(100)
    const calls = isolates.reduce((sum, i) => sum + i.stats.snapshot().durableObjectCalls, 0)
    expect(calls).toBeLessThan(20)
  })

  it('sends its own call after MAX_LINGER_MS behind a call that has not returned (a far object costs one hop, not two)', async () => {
    const lingered: number[] = []
    const isolate = new LimiterIsolate({
      lanes: new Coalescer(undefined, (ms) => {
        lingered.push(ms)
        return Promise.resolve()
      }),
    })
    const first = charge(flaky, call('slow-linger'), 5_000, isolate)
    const second = charge(flaky, call('slow-linger'), 5_000, isolate)
    const stub = env.FLAKY_LIMITER.getByName('co|slow-linger')
    // Both calls reach the object while the first is still undecided.
    await vi.waitFor(async () => expect(await stub.calls()).toBe(2))
    expect(lingered).toEqual([MAX_LINGER_MS])
    await stub.proceed()
    await vi.waitFor(async () => {
      await stub.proceed()
      expect((await Promise.all([first, second])).every((r) => r.enforced)).toBe(true)
    })
  })

  it('decides each request of a batch under its own policy (tiers), in order', async () => {
    const isolate = new LimiterIsolate()
    // A tier's policy names its tier (`tierPolicy`): tiers of one rule share the key's count.
    const small: Policy = { ...window100, limit: 2, tier: 'small' }
    const results = await Promise.all(
      [window100, small, small, window100, small].map((policy) =>
        charge(env.LIMITER, call('tiers', { policy }), 5_000, isolate)
      )
    )
    // In order: 1st (limit 100) ok, 2nd (limit 2, 1 used) ok, 3rd (2 used) denied, 4th ok, 5th denied.
    expect(results.map((r) => r.enforced && r.decision.allowed)).toEqual([
      true,
      true,
      false,
      true,
      false,
    ])
  })

  it('fails each request of a failed batch by its own fail mode', async () => {
    const isolate = new LimiterIsolate()
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        Promise.resolve(
          charge(
            flaky,
            call('a', {
              rule: { id: 'throws' },
              key: 'throws|batch',
              failMode: i % 2 ? 'closed' : 'open',
            }),
            1_000,
            isolate
          )
        ).catch((error: unknown) => error)
      )
    )
    outcomes.forEach((outcome, i) => {
      if (i % 2) expect(outcome).toBeInstanceOf(LimiterUnavailableError)
      else expect(outcome).toEqual({ enforced: false, reason: 'error' })
    })
    expect(isolate.stats.snapshot().durableObjectCalls).toBe(2)
    expect(isolate.stats.snapshot().failOpen).toBe(3)
  })

  it('times out every request of a batch whose call never returns, each by its own fail mode', async () => {
    const isolate = new LimiterIsolate()
    const hanging = (failMode: 'open' | 'closed') =>
      Promise.resolve(
        charge(
          flaky,
          call('a', { rule: { id: 'hangs' }, key: 'hangs|batch', failMode }),
          50,
          isolate
        )
      ).catch((error: unknown) => error)
    // The first call goes alone; the second opens a batch behind it, which the rest join.
    const lead = [hanging('open'), hanging('closed')]
    await vi.waitFor(() => expect(isolate.lanes.joins('hangs|batch')).toBe(true), { interval: 1 })
    const joined = [hanging('open'), hanging('closed')]
    const outcomes = await Promise.all([...lead, ...joined])
    outcomes.forEach((outcome, i) => {
      if (i % 2) expect((outcome as LimiterUnavailableError).reason).toBe('timeout')
      else expect(outcome).toEqual({ enforced: false, reason: 'timeout' })
    })
    expect(isolate.stats.snapshot().failOpen).toBe(2)
  })

  it('does not coalesce concurrency limits: every acquire is its own call', async () => {
    const isolate = new LimiterIsolate()
    const slots: Policy = {
      algorithm: 'concurrency',
      limit: 5,
      periodMs: 60_000,
      queue: 0,
      maxWaitMs: 0,
    }
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        charge(env.LIMITER, call('slots', { policy: slots }), 5_000, isolate)
      )
    )
    expect(results.filter((r) => r.enforced && r.decision.allowed)).toHaveLength(5)
    expect(isolate.stats.snapshot().durableObjectCalls).toBe(8)
  })
})

describe('RateLimiterObject.chargeBatch', () => {
  it('decides like the same calls one by one, with one write', async () => {
    const items = [1, 3, 1, 2, 5, 1].map((cost) => ({
      policy: { ...window100, limit: 6 } as Policy,
      cost,
    }))
    const one = env.LIMITER.getByName('batch-one-by-one')
    const sequential = []
    for (const { policy, cost } of items) sequential.push((await one.charge(policy, cost)).allowed)
    const stub = env.LIMITER.getByName('batch-at-once')
    const batched = await runInDurableObject(stub, (instance, state) => {
      const put = vi.spyOn(state.storage.kv, 'put')
      try {
        const decisions = instance.chargeBatch(items)
        return { allowed: decisions.map((d) => d.allowed), writes: put.mock.calls.length }
      } finally {
        vi.restoreAllMocks()
      }
    })
    expect(batched).toEqual({ allowed: sequential, writes: 1 })
    expect(sequential).toEqual([true, true, true, false, false, true])
  })
})

describe('Coalescer', () => {
  it('queues requests behind the call in flight and sends them as one batch, in order', async () => {
    const lanes = new Coalescer<number, number>()
    const sent: number[][] = []
    let release!: () => void
    const first = new Promise<void>((resolve) => (release = resolve))
    const send = async (items: number[]) => {
      sent.push(items)
      if (sent.length === 1) await first
      return items.map((n) => n * 10)
    }
    const results = [1, 2, 3, 4].map((n) => lanes.run('k', n, send, () => undefined))
    await Promise.resolve()
    release()
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40])
    expect(sent).toEqual([[1], [2, 3, 4]])
    expect(lanes.lanes).toBe(0)
  })

  it('caps a batch, answers items settled locally, and drops items whose caller gave up', async () => {
    const lanes = new Coalescer<number, number>(2)
    const sent: number[][] = []
    const send = async (items: number[]) => {
      sent.push(items)
      await Promise.resolve()
      return items.map((n) => n)
    }
    const settle = (n: number) => () => {
      if (n === 3) return -3
      if (n === 5) throw new Error('gave up')
      return undefined
    }
    const results = [1, 2, 3, 4, 5, 6].map((n) =>
      lanes.run('k', n, send, settle(n)).catch((e: Error) => e.message)
    )
    expect(await Promise.all(results)).toEqual([1, 2, -3, 4, 'gave up', 6])
    expect(sent).toEqual([[1], [2], [4], [6]])
  })

  it('sends anyway once the call ahead has not settled within gateWaitMs', async () => {
    let waited!: () => void
    const lanes = new Coalescer<number, number>(
      10,
      () => new Promise<void>((resolve) => (waited = resolve))
    )
    const sent: number[][] = []
    const send = (items: number[]) => {
      sent.push(items)
      // The first call never returns (its request was cancelled).
      return sent.length === 1 ? new Promise<number[]>(() => {}) : Promise.resolve(items)
    }
    void lanes.run('k', 1, send, () => undefined, 100)
    const second = lanes.run('k', 2, send, () => undefined, 100)
    const third = lanes.run('k', 3, send, () => undefined, 100)
    await Promise.resolve()
    expect(sent).toEqual([[1]])
    waited()
    expect(await Promise.all([second, third])).toEqual([2, 3])
    expect(sent).toEqual([[1], [2, 3]])
    // The lane is free again for the next request.
    expect(await lanes.run('k', 4, send, () => undefined, 100)).toBe(4)
  })
})
