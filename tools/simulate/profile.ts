/**
 * @module tools/simulate/profile
 * The simulator's seeded randomness and its default traffic, a bursty profile (30 steady
 * senders, a burst every 17 s, a silence every 21 s), in virtual time.
 * Pure: no clock, no I/O, no `Math.random`.
 */

/** One request in a simulation: when it arrives, whose it is, how many units it takes. */
export interface Arrival {
  /** Arrival time, ms from the start of the run. */
  t: number
  /** The client it comes from (the trace's key; `global` in the profile). */
  key: string
  /** Units it takes. */
  cost: number
  /** The origin's response status, when the trace records it (rules with `countOn` need it). */
  status?: number
}

/**
 * mulberry32: a tiny seeded PRNG, good enough for traffic and identical on every platform.
 *
 * @param seed - any 32-bit integer
 * @returns a function giving the next number in [0, 1)
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The knobs of the generator; {@link DEFAULT_PROFILE} holds the default traffic's values. */
export interface ProfileOptions {
  /** Seeds every sender's PRNG. */
  seed: number
  /** Length of the run in ms. */
  durationMs: number
  /** Steady senders, each looping "send, then pause". */
  senders: number
  /** A sender pauses a whole number of ms drawn uniformly from [0, maxPauseMs). */
  maxPauseMs: number
  /** A burst starts every this many ms, the first at 0. */
  burstEveryMs: number
  /** A burst lasts this long. */
  burstForMs: number
  /** During a burst one extra request every this many ms. */
  burstStepMs: number
  /** A silence starts every this many ms, the first at 0. */
  idleEveryMs: number
  /** A silence lasts this long: nobody sends. */
  idleForMs: number
  /** The key every generated request carries. */
  key: string
}

/**
 * The default traffic, a classic rate-limiter test console's generator: 30 senders that each
 * pause 0–99 ms between requests (mean 49.5 ms: about 606 req/s together), a burst of one request
 * per 2 ms (about 500 req/s) for 2 s every 17 s, and 3 s of silence every 21 s (its prose says
 * every 20 s; its code waits 18 s after each 3 s silence, and the code is followed).
 */
export const DEFAULT_PROFILE: Omit<ProfileOptions, 'seed'> = {
  durationMs: 120_000,
  senders: 30,
  maxPauseMs: 100,
  burstEveryMs: 17_000,
  burstForMs: 2_000,
  burstStepMs: 2,
  idleEveryMs: 21_000,
  idleForMs: 3_000,
  key: 'global',
}

/**
 * Whether `t` falls in a silence.
 *
 * @param t - ms from the start
 * @param options - the profile
 */
export function isIdle(t: number, options: Pick<ProfileOptions, 'idleEveryMs' | 'idleForMs'>) {
  return t % options.idleEveryMs < options.idleForMs
}

/**
 * The profile's requests, sorted by time (ties: sender order, then the burst).
 *
 * As in that generator, a sender keeps its rhythm through a silence and only skips the sends that fall
 * in it, so traffic resumes at full rate the moment the silence ends.
 *
 * @param options - the profile and its seed
 * @returns every request of the run, each of cost 1
 */
export function generateProfile(options: ProfileOptions): Arrival[] {
  const arrivals: Arrival[] = []
  const { durationMs, key } = options
  for (let sender = 0; sender < options.senders; sender++) {
    // One stream per sender, so changing the number of senders leaves the others' timing alone.
    const random = mulberry32((options.seed ^ Math.imul(sender + 1, 0x9e3779b9)) >>> 0)
    for (let t = 0; t < durationMs; t += Math.floor(random() * options.maxPauseMs)) {
      if (!isIdle(t, options)) arrivals.push({ t, key, cost: 1 })
    }
  }
  for (let start = 0; start < durationMs; start += options.burstEveryMs) {
    for (let t = start; t < start + options.burstForMs && t < durationMs; t += options.burstStepMs)
      if (!isIdle(t, options)) arrivals.push({ t, key, cost: 1 })
  }
  return sortByTime(arrivals)
}

/**
 * Sorts requests by time, keeping the given order among equal times (a stable sort).
 *
 * @param arrivals - requests in any order; not modified
 */
export function sortByTime(arrivals: readonly Arrival[]): Arrival[] {
  return [...arrivals].sort((a, b) => a.t - b.t)
}
