/**
 * @module test/support/flaky-leased
 * Leased rules whose Durable Objects fail as their rule id says (see `FlakyLimiterObject`),
 * driven through the Worker, for the tests of each tier failing.
 */
import { afterEach, beforeEach, vi } from 'vitest'
import type { LimiterNamespace } from '../../src/limiter/client'
import { client, rules } from './http'

const flaky = (c: { env: { FLAKY_LIMITER: unknown } }) => c.env.FLAKY_LIMITER as LimiterNamespace
let serial = 0

/**
 * A leased sliding-window rule on one global key, its objects in `FLAKY_LIMITER` failing as
 * `fault` says: the rule's id (`<fault>-<failMode>-<n>`, the root's name) and a request to send.
 *
 * @param fault - how the objects fail (the start of the rule id)
 * @param failMode - the rule's fail mode
 * @param limit - its limit and period
 * @param request - the client's address and, if any, its `cf`
 */
export function flakyLeased(
  fault: string,
  failMode: 'open' | 'closed',
  limit: { limit: number; period: string },
  request: { ip: string; cf?: Record<string, unknown> }
) {
  const id = `${fault}-${failMode}-${serial++}`
  const send = client({
    limiter: flaky,
    timeoutMs: 300,
    rules: rules({
      id,
      key: [],
      algorithm: 'sliding-window',
      ...limit,
      consistency: 'leased',
      failMode,
    }),
  })
  return { id, send: () => send('/x', request) }
}

/** Keeps the failures' warnings and errors out of the test output. */
export function quietConsole(): void {
  beforeEach(() => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.spyOn(console, 'error').mockImplementation(() => {})
  })
  afterEach(() => vi.restoreAllMocks())
}
