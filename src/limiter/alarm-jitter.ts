/**
 * @module limiter/alarm-jitter
 * How long after its state expires a key's cleanup alarm goes off.
 */

/** The most an alarm is put off past the expiry (ms): cleanup must happen, not promptly. */
export const MAX_ALARM_JITTER_MS = 60_000

/**
 * A key's cleanup offset: from 0 up to its period (at most {@link MAX_ALARM_JITTER_MS}), fixed
 * by its object name (FNV-1a, then MurmurHash3's finaliser). A key keeps its offset, while keys expiring together (every key
 * of a rule charged in one window expires at the same window end) come due spread over a period
 * instead of in one burst that stalls live requests. Idle state lingers at most that long more.
 *
 * @param name - the object's name
 * @param periodMs - the policy's period
 */
export function alarmJitterMs(name: string, periodMs: number): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193)
  // MurmurHash3's finaliser: names that differ only at the end still land far apart.
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35)
  hash ^= hash >>> 16
  const spreadMs = Math.min(MAX_ALARM_JITTER_MS, periodMs)
  return Math.floor(((hash >>> 0) / 2 ** 32) * spreadMs)
}
