/**
 * @module algorithms/refund
 * Handing back units that were reserved (`reserve.ts`) and not spent, where the algorithm can
 * take them back without ever admitting more than a key that never reserved them would:
 *
 * - fixed window: only while the window they count in has not ended (the current one, or the
 *   next for units charged ahead); the count goes down, never below 0;
 * - sliding window: the same, and units of the window just ended (they lapsed unspent at its
 *   end): its count still weighs on the sliding estimate, and goes down to what was admitted;
 * - token bucket and GCRA: only while the lessee's hold on them lasts; once it has lapsed they
 *   count as spent.
 *
 * And, for the bucket algorithms, units a lessee reports spent: they leave its hold.
 */
import { ALGORITHMS, type KeyState } from './index'
import type { LeasablePolicy } from './reserve'
import type { Algorithm, LotSpan } from './types'

/**
 * What becomes of units a lessee hands back: `refund`, unspent (back where the algorithm can
 * take them, see above); `spent`, reported spent (they leave a bucket's hold without coming
 * back, so it may refill past them from now on; windowed algorithms counted them when charged).
 */
export type HandBack = 'refund' | 'spent'

/**
 * The key state with `units` handed back as `how` says. A penalty lock stays as it is.
 *
 * @param how - unspent (`refund`) or reported spent (`spent`)
 * @param key - the stored key state
 * @param policy - the policy the units were reserved under
 * @param nowMs - the current time
 * @param units - how many
 * @param lot - when they were to be spent, as granted
 * @returns the next state, or the very object passed in when nothing changes
 */
export function handBackKey(
  how: HandBack,
  key: KeyState | undefined,
  policy: LeasablePolicy,
  nowMs: number,
  units: number,
  lot: LotSpan
): KeyState | undefined {
  const algorithm = ALGORITHMS[policy.algorithm] as Algorithm<LeasablePolicy, unknown>
  const apply = algorithm[how]
  if (key?.state === undefined || !(units > 0) || !apply) return key
  const state = apply.call(algorithm, key.state, policy, nowMs, units, lot)
  return state === key.state ? key : { ...key, state }
}
