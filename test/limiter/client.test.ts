import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import type { Policy } from '../../src/algorithms'
import { LimiterUnavailableError } from '../../src/errors'
import { limit, type LimitCall, type LimiterNamespace } from '../../src/limiter/client'
import { MAX_OBJECT_NAME_LENGTH, objectName } from '../../src/limiter/object-name'

const policy: Policy = { algorithm: 'sliding-window', limit: 2, periodMs: 60_000 }
const call = (fields: Partial<LimitCall>): LimitCall => ({
  ruleId: 'r',
  key: 'r|k',
  policy,
  cost: 1,
  failMode: 'open',
  ...fields,
})
const flaky = env.FLAKY_LIMITER as unknown as LimiterNamespace

describe('limiter client', () => {
  it("returns the Durable Object's decision", async () => {
    const result = await limit(env.LIMITER, call({ key: 'r|decides' }), 1_000)
    expect(result).toMatchObject({ enforced: true, decision: { allowed: true, remaining: 1 } })
  })

  it('fails open on an error: not enforced, with the reason', async () => {
    expect(await limit(flaky, call({ ruleId: 'throws', key: 'throws|a' }), 1_000)).toEqual({
      enforced: false,
      reason: 'error',
    })
  })

  it('fails open on a timeout', async () => {
    // The object never answers, so only the 50 ms timeout can end this call.
    expect(await limit(flaky, call({ ruleId: 'hangs', key: 'hangs|a' }), 50)).toEqual({
      enforced: false,
      reason: 'timeout',
    })
  })

  it('fails closed by throwing LimiterUnavailableError', async () => {
    const error = await limit(
      flaky,
      call({ ruleId: 'throws', key: 'throws|b', failMode: 'closed' }),
      1_000
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimiterUnavailableError)
    expect((error as LimiterUnavailableError).reason).toBe('error')
    const timeout = await limit(
      flaky,
      call({ ruleId: 'hangs', key: 'hangs|b', failMode: 'closed' }),
      50
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
    const result = await limit(env.LIMITER, call({ key: long }), 1_000)
    expect(result.enforced).toBe(true)
  })
})
