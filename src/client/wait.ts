/**
 * @module client/wait
 * How long to wait before a retry: "full jitter" (Brooker, *Exponential Backoff and Jitter*,
 * AWS Architecture Blog, 2015), never earlier than the server asked.
 */

/** How the backoff grows. */
export interface Backoff {
  /** The first retry's backoff (ms); each further retry doubles it. */
  baseDelayMs: number
  /** The backoff never grows past this (ms). */
  maxBackoffMs: number
}

/** The defaults: 500 ms, doubling, at most 20 s. */
export const DEFAULT_BACKOFF: Backoff = { baseDelayMs: 500, maxBackoffMs: 20_000 }

/**
 * The backoff before retry number `retry` (0 for the first): `min(maxBackoffMs,
 * baseDelayMs * 2^retry)`.
 *
 * @param retry - how many retries came before this one
 * @param backoff - base and cap
 */
export function backoffMs(retry: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  return Math.min(backoff.maxBackoffMs, backoff.baseDelayMs * 2 ** retry)
}

/**
 * The wait before a retry, in whole ms.
 *
 * - With a server hint `H`: `H + random * min(H, backoff)`. Never before the server said, and
 *   spread over up to twice `H` (at most `H` plus the backoff), so that clients told the same
 *   time do not all come back in the same instant.
 * - Without: `random * backoff` (full jitter).
 *
 * @param hintMs - what the server said (ms), if anything
 * @param retry - how many retries came before this one
 * @param random - a number in [0, 1)
 * @param backoff - base and cap
 */
export function waitMs(
  hintMs: number | undefined,
  retry: number,
  random: number,
  backoff: Backoff = DEFAULT_BACKOFF
): number {
  const spread = backoffMs(retry, backoff)
  if (hintMs === undefined) return Math.floor(random * spread)
  return hintMs + Math.floor(random * Math.min(hintMs, spread))
}
