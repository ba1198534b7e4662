import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import type { ConcurrencyPolicy, Policy } from '../../src/algorithms'
import { LimiterUnavailableError } from '../../src/errors'
import {
  charge,
  locateIsolate,
  releaseSlot,
  type ChargeCall,
  type LimiterNamespace,
} from '../../src/limiter/client'
import { isolateLeases } from '../../src/limiter/leased/leases'
import { MAX_OBJECT_NAME_LENGTH, objectName } from '../../src/limiter/calls/object-name'
import { CALL_MS, chargeCalls, flaky } from '../support/charge-calls'

const policy: Policy = { algorithm: 'sliding-window', limit: 2, periodMs: 60_000 }
const callOn = chargeCalls('r', policy)
const call = (fields: Partial<ChargeCall>): ChargeCall => callOn('k', fields)

describe('limiter client', () => {
  it("returns the Durable Object's decision", async () => {
    const result = await charge(env.LIMITER, call({ key: 'r|decides' }), CALL_MS)
    expect(result).toMatchObject({ enforced: true, decision: { allowed: true, remaining: 1 } })
  })

  it('fails open on an error: not enforced, with the reason', async () => {
    expect(await charge(flaky, call({ rule: { id: 'throws' }, key: 'throws|a' }), CALL_MS)).toEqual(
      {
        enforced: false,
        reason: 'error',
      }
    )
  })

  it('fails open on a timeout', async () => {
    // The object never answers, so only the 50 ms timeout can end this call.
    expect(await charge(flaky, call({ rule: { id: 'hangs' }, key: 'hangs|a' }), 50)).toEqual({
      enforced: false,
      reason: 'timeout',
    })
  })

  it('fails closed by throwing LimiterUnavailableError', async () => {
    const error = await Promise.resolve(
      charge(flaky, call({ rule: { id: 'throws' }, key: 'throws|b', failMode: 'closed' }), CALL_MS)
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimiterUnavailableError)
    expect((error as LimiterUnavailableError).reason).toBe('error')
    const timeout = await Promise.resolve(
      charge(flaky, call({ rule: { id: 'hangs' }, key: 'hangs|b', failMode: 'closed' }), 50)
    ).catch((e: unknown) => e)
    expect((timeout as LimiterUnavailableError).reason).toBe('timeout')
  })

  it('bounds object names: long keys become a digest under the rule id', async () => {
    expect(await objectName('r', 'r|short')).toBe('r|short')
    const long = `r|${'x'.repeat(5_000)}`
    const name = await objectName('r', long)
    expect(name).toMatch(/^r\|#[A-Za-z0-9_-]{43}$/)
    expect(name.length).toBeLessThanOrEqual(MAX_OBJECT_NAME_LENGTH)
    expect(await objectName('r', `${long}y`)).not.toBe(name)
    const result = await charge(env.LIMITER, call({ key: long }), CALL_MS)
    expect(result.enforced).toBe(true)
  })

  it('takes a concurrency slot through the queue: timedOut when the wait runs out, free once released', async () => {
    const slots: ConcurrencyPolicy = {
      algorithm: 'concurrency',
      limit: 1,
      periodMs: 60_000,
      queue: 1,
      maxWaitMs: 20,
    }
    const slot = call({ key: 'r|slot', policy: slots })
    const first = await charge(env.LIMITER, slot, CALL_MS)
    expect(first).toMatchObject({ enforced: true, decision: { allowed: true } })
    const waited = await charge(env.LIMITER, slot, CALL_MS)
    expect(waited).toMatchObject({ enforced: true, decision: { allowed: false, timedOut: true } })
    const leaseId = first.enforced ? first.decision.leaseId : undefined
    expect(leaseId).toEqual(expect.any(String))
    await releaseSlot(env.LIMITER, slot, slots, leaseId ?? '', CALL_MS)
    expect(await charge(env.LIMITER, slot, CALL_MS)).toMatchObject({ decision: { allowed: true } })
  })
})

describe('placement', () => {
  const one: Policy = { algorithm: 'fixed-window', limit: 1, periodMs: 3_600_000 }
  /**
   * workerd does not implement jurisdictions, so this stands in for the runtime: a jurisdiction
   * is a namespace of its own (here, names under a prefix), and every stub request is recorded.
   */
  function placedNamespace(asked: unknown[], prefix = ''): LimiterNamespace {
    return {
      jurisdiction: (jurisdiction: string) => {
        asked.push({ jurisdiction })
        return placedNamespace(asked, `${prefix}${jurisdiction}:`)
      },
      getByName: (name: string, options?: unknown) => {
        asked.push(
          options === undefined ? { name: prefix + name } : { name: prefix + name, options }
        )
        return env.LIMITER.getByName(prefix + name)
      },
    } as unknown as LimiterNamespace
  }

  it('counts a rule with a jurisdiction in objects of its own: changing it starts afresh', async () => {
    const asked: unknown[] = []
    const namespace = placedNamespace(asked)
    const plain = call({ rule: { id: 'placed' }, key: 'placed|k', policy: one })
    const eu = { ...plain, rule: { id: 'placed', placement: { jurisdiction: 'eu' as const } } }
    expect(await charge(namespace, plain, CALL_MS)).toMatchObject({ decision: { allowed: true } })
    expect(await charge(namespace, plain, CALL_MS)).toMatchObject({ decision: { allowed: false } })
    // Same rule and key, another jurisdiction: another object, and no denial repeated from the first.
    expect(await charge(namespace, eu, CALL_MS)).toMatchObject({ decision: { allowed: true } })
    expect(await charge(namespace, eu, CALL_MS)).toMatchObject({ decision: { allowed: false } })
    expect(asked).toContainEqual({ jurisdiction: 'eu' })
    expect(asked).toContainEqual({ name: 'eu:placed|k' })
  })

  it("creates objects with the rule's location hint", async () => {
    const asked: unknown[] = []
    const hinted = call({
      rule: { id: 'hinted', placement: { locationHint: 'weur' } },
      key: 'hinted|k',
      policy: one,
    })
    expect(await charge(placedNamespace(asked), hinted, CALL_MS)).toMatchObject({
      decision: { allowed: true },
    })
    expect(asked).toEqual([{ name: 'hinted|k', options: { locationHint: 'weur' } }])
    // And the real runtime takes the hint.
    expect(await charge(env.LIMITER, { ...hinted, key: 'hinted|real' }, CALL_MS)).toMatchObject({
      decision: { allowed: true },
    })
  })

  it("reads a request's cf only until the isolate knows its location (workerd builds it anew on each read)", () => {
    let reads = 0
    const request = {
      get cf() {
        reads++
        return { colo: 'AMS' }
      },
    }
    expect(isolateLeases().located).toBe(false)
    locateIsolate(request)
    locateIsolate(request)
    locateIsolate(request)
    expect(reads).toBe(1)
    expect(isolateLeases().located).toBe(true)
  })
})
