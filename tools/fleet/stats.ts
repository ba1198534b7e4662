/**
 * @module tools/fleet/stats
 * The fleet's figures from raw observations: quantiles, and counts per second as a mean and the
 * busiest second.
 */

/** A mean and the busiest second. */
export interface Rate {
  mean: number
  peak: number
}

/**
 * The `q` quantile (nearest rank) of `values`; `null` for none.
 *
 * @param values - in any order (not changed)
 * @param q - from 0 to 1
 */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

/**
 * Counts per second over whole seconds `[fromS, toS)`: the mean (one decimal) and the most.
 *
 * @param perSecond - count by epoch second (a second missing counts 0)
 * @param fromS - the first second
 * @param toS - past the last
 */
export function rateOf(perSecond: ReadonlyMap<number, number>, fromS: number, toS: number): Rate {
  let total = 0
  let peak = 0
  for (let s = fromS; s < toS; s++) {
    const n = perSecond.get(s) ?? 0
    total += n
    peak = Math.max(peak, n)
  }
  const seconds = Math.max(1, toS - fromS)
  return { mean: Math.round((total / seconds) * 10) / 10, peak }
}

/**
 * The first second from `fromS` from which the per-second values stay within `tolerance` of
 * `steady` for `holdS` seconds; `null` when they never do before `toS`. A second without a
 * value does not hold.
 *
 * @param perSecond - value by epoch second
 * @param steady - the steady value
 * @param fromS - where to start looking
 * @param toS - past the last second
 * @param tolerance - how far from `steady` a second may be
 * @param holdS - how long it must hold
 */
export function settledAt(
  perSecond: ReadonlyMap<number, number>,
  steady: number,
  fromS: number,
  toS: number,
  tolerance: number,
  holdS = 3
): number | null {
  const within = (s: number) => {
    const value = perSecond.get(s)
    return value !== undefined && Math.abs(value - steady) <= tolerance
  }
  for (let s = fromS; s + holdS <= toS; s++) {
    let ok = true
    for (let k = s; k < s + holdS && ok; k++) ok = within(k)
    if (ok) return s
  }
  return null
}
