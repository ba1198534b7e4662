/**
 * @module test/support/virtual-clock
 * Runs the scale simulator's virtual clock for tests that drive the limiter's objects in it.
 */
import { drainMicrotasks, type VirtualClock } from '../../tools/scale/virtual-time'

/**
 * Runs the clock until nothing is due, draining microtasks at each instant.
 *
 * @param clock - the simulator's clock, installed
 */
export async function settle(clock: VirtualClock): Promise<void> {
  await drainMicrotasks()
  while (clock.nextAtMs() < Number.POSITIVE_INFINITY) {
    clock.advanceTo(clock.nextAtMs())
    do await drainMicrotasks()
    while (clock.runDue())
  }
}
