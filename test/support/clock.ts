/**
 * @module test/support/clock
 * A still clock for tests that go through the Worker and its Durable Objects: they share the
 * test's isolate, so faking `Date` here fakes it there too, and times come out exact.
 */
import { vi } from 'vitest'

/**
 * Stops `Date` at the current time (so alarms the objects arm are still in the future) and
 * returns it; undo with `vi.useRealTimers()`. Timers keep running for real.
 */
export function freezeClock(): number {
  const nowMs = Date.now()
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(nowMs)
  return nowMs
}
