import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import type { Policy } from '../../../src/algorithms'
import { UNENFORCED_HEADER } from '../../../src/http/request/rate-limit'
import type { LimiterNamespace } from '../../../src/limiter/client'
import { client, rules } from '../../support/http'

// Fault injection: the Durable Object behind a rule fails in each way `FlakyLimiterObject`
// knows (its name, here the rule id, picks the fault), under each fail mode, through the app.

const flaky = (c: { env: { FLAKY_LIMITER: unknown } }) => c.env.FLAKY_LIMITER as LimiterNamespace
const policy: Policy = { algorithm: 'sliding-window', limit: 10, periodMs: 3_600_000 }
let serial = 0

/** A rule keyed on nothing, so its object's name is its id: `<fault>-<mode>-<n>`. */
function setup(fault: string, failMode: 'open' | 'closed', timeoutMs = 1_000) {
  const id = `${fault}-${failMode}-${serial++}`
  const send = client({
    limiter: flaky,
    timeoutMs,
    rules: rules({ id, key: [], algorithm: 'sliding-window', limit: 10, period: '1h', failMode }),
  })
  const object = env.FLAKY_LIMITER.getByName(id)
  return { id, send: () => send('/x', { ip: '203.0.113.7' }), object }
}

let warn: MockInstance<typeof console.warn>
let error: MockInstance<typeof console.error>
beforeEach(() => {
  warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
  error = vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => vi.restoreAllMocks())

/** The JSON events logged at a level. */
const events = (spy: MockInstance<(...args: unknown[]) => void>) =>
  spy.mock.calls.flatMap(([line]) => {
    try {
      return [JSON.parse(String(line)) as Record<string, unknown>]
    } catch {
      return []
    }
  })

/** Fails unless the response is what the fail mode documents for this rule and reason. */
async function expectFailMode(
  response: Response,
  failMode: 'open' | 'closed',
  id: string,
  reason: string
): Promise<void> {
  if (failMode === 'open') {
    expect(response.status).toBe(200)
    expect(response.headers.get(UNENFORCED_HEADER)).toBe(id)
    expect(response.headers.get('X-RateLimit-Limit')).toBeNull()
    expect(response.headers.get('x-demo-origin')).toBe('1')
    expect(events(warn)).toContainEqual(
      expect.objectContaining({ event: 'rate-limit-fail-open', rule: id, reason })
    )
    expect(events(error)).toEqual([])
  } else {
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(response.headers.get('Retry-After')).toBe('1')
    expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
    expect(response.headers.get('x-demo-origin')).toBeNull()
    expect(await response.json()).toMatchObject({ status: 503, rules: [id] })
    expect(events(error)).toEqual([
      { event: 'rate-limit-fail-closed', rules: [id], reasons: [reason] },
    ])
    expect(events(warn)).toEqual([])
  }
}

describe.each(['open', 'closed'] as const)('a failing Durable Object, failing %s', (failMode) => {
  it.each([
    { fault: 'throws', reason: 'error', calls: 1 },
    { fault: 'retryable', reason: 'error', calls: 2 },
    { fault: 'overloaded', reason: 'overloaded', calls: 1 },
  ])(
    '$fault: the documented answer, after $calls call(s) to the object',
    async ({ fault, reason, calls }) => {
      const { id, send, object } = setup(fault, failMode)
      await expectFailMode(await send(), failMode, id, reason)
      expect(await object.calls()).toBe(calls)
    }
  )

  it('timing out: the documented answer, and no retry', async () => {
    const { id, send, object } = setup('hangs', failMode, 50)
    await expectFailMode(await send(), failMode, id, 'timeout')
    expect(await object.calls()).toBe(1)
  })

  it('deciding after the timeout: counted once when it lands, never retried', async () => {
    const { id, send, object } = setup('slow', failMode, 50)
    await expectFailMode(await send(), failMode, id, 'timeout')
    await object.proceed()
    expect(await object.calls()).toBe(1)
    expect(await object.remaining(policy)).toBe(9)
  })

  it('losing the reply after counting: retried once, so counted twice at most', async () => {
    const { id, send, object } = setup('counts-then-fails', failMode)
    await expectFailMode(await send(), failMode, id, 'error')
    expect(await object.calls()).toBe(2)
    expect(await object.remaining(policy)).toBe(8)
  })

  it('failing once with a retryable error: the retry decides, counted once', async () => {
    const { send, object } = setup('flaky-once', failMode)
    const response = await send()
    expect(response.status).toBe(200)
    expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('9')
    expect(await object.calls()).toBe(2)
    expect(await object.remaining(policy)).toBe(9)
    expect([...events(warn), ...events(error)]).toEqual([])
  })
})
