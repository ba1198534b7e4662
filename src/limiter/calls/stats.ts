/**
 * @module limiter/stats
 * What this isolate's limiter client did since the isolate started: Durable Object calls
 * (charges, lease refills and returns alike), decisions taken locally or by a call, calls in
 * flight, call latency, fail-opens; in all and per rule. Counting is a few additions per call:
 * nothing here is on the request's critical path beyond that.
 */

/** How many recent call latencies each rule keeps for its percentiles. */
const LATENCY_SAMPLES = 512

/** Counters of one rule, or of all rules together. */
export interface ClientCounters {
  /** Calls made to limiter objects (every RPC, lease refills and returns included). */
  durableObjectCalls: number
  /** Requests decided without a call (`local`) and with one (`durableObject`). */
  decisions: { local: number; durableObject: number }
  /** Calls started and not yet answered. */
  inFlight: number
  /** Latency of the last calls (ms), `null` before the first answer. */
  latencyMs: { p50: number | null; p99: number | null }
  /** Requests let through because no decision could be had. */
  failOpen: number
}

/** The JSON of `GET /__ratelimit/stats`'s client part. */
export interface ClientStatsSnapshot extends ClientCounters {
  /** When this isolate's counting began (Unix ms). */
  sinceMs: number
  /** The same counters per rule id. */
  rules: Record<string, ClientCounters>
}

/** Where a request's decision for one rule was taken. */
export type DecidedBy = 'local' | 'durableObject'

class Tally {
  durableObjectCalls = 0
  local = 0
  durableObject = 0
  inFlight = 0
  failOpen = 0
  readonly #latencies: number[] = []
  #next = 0

  latency(ms: number): void {
    if (this.#latencies.length < LATENCY_SAMPLES) this.#latencies.push(ms)
    else this.#latencies[this.#next] = ms
    this.#next = (this.#next + 1) % LATENCY_SAMPLES
  }

  counters(): ClientCounters {
    const sorted = [...this.#latencies].sort((a, b) => a - b)
    const at = (q: number) =>
      sorted.length === 0
        ? null
        : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
    return {
      durableObjectCalls: this.durableObjectCalls,
      decisions: { local: this.local, durableObject: this.durableObject },
      inFlight: this.inFlight,
      latencyMs: { p50: at(0.5), p99: at(0.99) },
      failOpen: this.failOpen,
    }
  }
}

/**
 * The counters of one isolate's client. One instance per isolate ({@link clientStats}); tests
 * make their own.
 */
export class ClientStats {
  readonly #all = new Tally()
  readonly #rules = new Map<string, Tally>()
  readonly #sinceMs: number

  /** @param sinceMs - when counting began (Unix ms) */
  constructor(sinceMs: number) {
    this.#sinceMs = sinceMs
  }

  /**
   * Counts a Durable Object call as it starts.
   *
   * @param ruleId - the rule whose key's object is called
   * @param startMs - when it started (ms, any clock that `done` uses too)
   * @returns call when the answer (or the failure) arrives, with the time then
   */
  call(ruleId: string, startMs: number): (endMs: number) => void {
    const tallies = [this.#all, this.#rule(ruleId)]
    for (const t of tallies) {
      t.durableObjectCalls++
      t.inFlight++
    }
    return (endMs) => {
      for (const t of tallies) {
        t.inFlight--
        t.latency(Math.max(0, endMs - startMs))
      }
    }
  }

  /**
   * Counts one request's decision for a rule.
   *
   * @param ruleId - the rule
   * @param by - taken locally, or by a Durable Object call
   */
  decided(ruleId: string, by: DecidedBy): void {
    for (const t of [this.#all, this.#rule(ruleId)]) t[by]++
  }

  /**
   * Counts a request let through because its rule could not be decided.
   *
   * @param ruleId - the rule
   */
  failedOpen(ruleId: string): void {
    for (const t of [this.#all, this.#rule(ruleId)]) t.failOpen++
  }

  /** Everything counted so far, as JSON. */
  snapshot(): ClientStatsSnapshot {
    const rules: Record<string, ClientCounters> = {}
    for (const [id, tally] of this.#rules) rules[id] = tally.counters()
    return { sinceMs: this.#sinceMs, ...this.#all.counters(), rules }
  }

  #rule(ruleId: string): Tally {
    let tally = this.#rules.get(ruleId)
    if (!tally) this.#rules.set(ruleId, (tally = new Tally()))
    return tally
  }
}

let isolateStats: ClientStats | undefined

/**
 * This isolate's counters, created on first use (a clock read at module scope would give 0 in
 * production).
 */
export function clientStats(): ClientStats {
  return (isolateStats ??= new ClientStats(Date.now()))
}
