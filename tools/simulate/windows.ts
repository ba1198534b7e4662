/**
 * @module tools/simulate/windows
 * Units per key in sliding windows (t − period, t]: the busiest window of a run, and the busiest
 * key's window sampled every few ms for the charts. Pure.
 */

/** One admitted (or executed) batch of units. */
export interface Charge {
  t: number
  cost: number
  key: string
}

/** The fullest window: its units, the key, and the time its window ends. */
export interface Peak {
  units: number
  t: number
  key: string
}

/** Charges grouped by key, each group sorted by time (stably). */
function byKey(charges: readonly Charge[]): Charge[][] {
  const groups = new Map<string, Charge[]>()
  for (const charge of charges) {
    const list = groups.get(charge.key)
    if (list) list.push(charge)
    else groups.set(charge.key, [charge])
  }
  const lists = [...groups.values()]
  for (const list of lists) list.sort((a, b) => a.t - b.t)
  return lists
}

/**
 * The fullest window: the most units charged to one key in any window (t − period, t]. The
 * earliest such window wins; no charges give `{ units: 0, t: 0, key: '' }`.
 *
 * @param charges - units in any order
 * @param periodMs - window length
 */
export function fullestWindow(charges: readonly Charge[], periodMs: number): Peak {
  let peak: Peak = { units: 0, t: 0, key: '' }
  for (const list of byKey(charges)) {
    let head = 0
    let sum = 0
    list.forEach(({ t, cost, key }, i) => {
      sum += cost
      while (list[head]!.t <= t - periodMs) sum -= list[head++]!.cost
      // A window ending at t holds every charge at t: measure after the last of them.
      if (list[i + 1]?.t === t) return
      if (sum > peak.units || (sum === peak.units && t < peak.t)) peak = { units: sum, t, key }
    })
  }
  return peak
}

/**
 * The worst overshoot: units in the fullest window less the limit; 0 if none exceeds it.
 *
 * @param charges - admitted units, in any order
 * @param limit - units per window
 * @param periodMs - window length
 */
export function worstOvershoot(
  charges: readonly Charge[],
  limit: number,
  periodMs: number
): number {
  return Math.max(0, fullestWindow(charges, periodMs).units - limit)
}

/**
 * The busiest key's units in the window (s − period, s] at s = 0, step, 2·step, …: for each s,
 * the most any one key holds (with one key, simply that key's). Fine steps show what one-second
 * bins hide, e.g. a fixed window admitting its limit on each side of a boundary.
 *
 * @param charges - units in any order
 * @param periodMs - window length
 * @param stepMs - time between samples
 * @param samples - how many samples
 */
export function busiestKeySeries(
  charges: readonly Charge[],
  periodMs: number,
  stepMs: number,
  samples: number
): number[] {
  const out = new Array<number>(samples).fill(0)
  for (const list of byKey(charges)) {
    let head = 0
    let tail = 0
    let sum = 0
    let k = Math.ceil(list[0]!.t / stepMs)
    while (k < samples) {
      const s = k * stepMs
      while (tail < list.length && list[tail]!.t <= s) sum += list[tail++]!.cost
      while (head < tail && list[head]!.t <= s - periodMs) sum -= list[head++]!.cost
      if (sum > out[k]!) out[k] = sum
      if (sum === 0) {
        // Nothing in the window: skip to the sample at or after the next charge.
        if (tail === list.length) break
        k = Math.max(k + 1, Math.ceil(list[tail]!.t / stepMs))
      } else k++
    }
  }
  return out
}
