/**
 * @module test/support/virtual-clock
 * Runs the scale simulator's virtual clock for tests that drive the limiter's objects in it.
 */
import { drainMicrotasks, type VirtualClock } from '../../tools/scale/virtual-time'

/**
 * Runs the clock until nothing is due (or until `untilMs`), draining microtasks at each instant.
 *
 * @param clock - the simulator's clock, installed
 * @param untilMs - no further than this (Unix ms)
 */
export async function settle(
  clock: VirtualClock,
  untilMs = Number.POSITIVE_INFINITY
): Promise<void> {
  await drainMicrotasks()
  while (clock.nextAtMs() < untilMs) {
    clock.advanceTo(clock.nextAtMs())
    do await drainMicrotasks()
    while (clock.runDue())
  }
}

/**
 * Runs `run` with the clock installed ({@link VirtualClock.install}) and puts the real timers
 * back when it ends, however it ends.
 *
 * @param clock - the simulator's clock
 * @param run - the test's body
 */
export async function whileInstalled<T>(clock: VirtualClock, run: () => Promise<T>): Promise<T> {
  const restore = clock.install()
  try {
    return await run()
  } finally {
    restore()
  }
}
