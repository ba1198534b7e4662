/**
 * @module tools/scale/scenarios
 * What each scenario sends and to which limit. Scenario S, the default: one key (`"key": []`),
 * 6,000,000 per 60 s (100,000 requests/s) as a sliding window, or the same rate as a token bucket
 * or GCRA (whose burst is its limit, as a rule without `burst` has, or `--burst` seconds of its
 * rate), or a fixed window. Requests cost 1.
 */
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { SHIFT_RING } from './regions'
import type { Demand } from './traffic'
import type { World } from './world'

/** The scenarios, with what each does. */
export const SCENARIOS = {
  steady: 'steady demand from every location, spread like traffic',
  zipf: 'steady demand, Zipf-skewed over locations (the n-th busiest sends 1/n)',
  shift:
    'at mid-run, within 1 s, half of each continent’s traffic moves to the next continent ' +
    '(north america, europe, middle east, africa, asia, oceania, south america, and round)',
  burst: 'at mid-run the busiest location sends 10 times its demand for 5 s',
  'small-key': 'a limit of 10 per second: most isolates see under 1 request/s',
  restart: 'at mid-run the key’s object restarts (its queued and running calls fail)',
} as const

/** A scenario's name. */
export type ScenarioName = keyof typeof SCENARIOS

/** The algorithms a leased rule may use, all of which the simulator runs. */
export const ALGORITHMS = ['sliding-window', 'token-bucket', 'fixed-window', 'gcra'] as const

/** An algorithm's name. */
export type AlgorithmName = (typeof ALGORITHMS)[number]

/** Demand (× the limit's rate) when `--demand` is not given. */
export const DEFAULT_DEMAND: Record<ScenarioName, number> = {
  steady: 1,
  zipf: 1,
  // Above the limit, so that what the limiter admits (not what arrives) is what recovers.
  shift: 1.1,
  burst: 1,
  'small-key': 1,
  restart: 1,
}

/** The burst: how many times its demand, for how long. */
const BURST = { times: 10, forMs: 5_000 }
/** How long the shift takes. */
const SHIFT_MS = 1_000

/** A scenario made concrete for one run. */
export interface ScenarioPlan {
  policy: LeasablePolicy
  /** The demand of the step starting at `tMs` (ms from the start). */
  demandAt(tMs: number): Demand
  /** When the traffic shift starts (`shift`). */
  shiftAtMs?: number
  /** When the key's object restarts (`restart`). */
  restartAtMs?: number
}

/**
 * The policy of a scenario: scenario S's, or the small key's.
 *
 * @param scenario - the scenario
 * @param algorithm - the algorithm
 * @param burstS - a bucket's burst in seconds of its rate (its limit when unset)
 * @param own - a limit and period other than the scenario's
 */
export function policyOf(
  scenario: ScenarioName,
  algorithm: AlgorithmName,
  burstS?: number,
  own?: { limit: number; periodMs: number }
): LeasablePolicy {
  const [limit, periodMs] = own
    ? [own.limit, own.periodMs]
    : scenario === 'small-key'
      ? [10, 1_000]
      : [6_000_000, 60_000]
  const burst =
    burstS === undefined ? limit : Math.max(1, Math.round((burstS * 1000 * limit) / periodMs))
  return algorithm === 'token-bucket' || algorithm === 'gcra'
    ? { algorithm, limit, periodMs, burst }
    : { algorithm, limit, periodMs }
}

/**
 * A scenario for one run.
 *
 * @param scenario - which
 * @param algorithm - the limit's algorithm
 * @param world - the locations
 * @param demand - demand as a multiple of the limit's rate
 * @param durationMs - the run's length
 * @param burstS - a bucket's burst in seconds of its rate (its limit when unset)
 * @param own - a limit and period other than the scenario's, and the units a request costs
 */
export function planScenario(
  scenario: ScenarioName,
  algorithm: AlgorithmName,
  world: World,
  demand: number,
  durationMs: number,
  burstS?: number,
  own?: { policy?: { limit: number; periodMs: number }; cost?: number }
): ScenarioPlan {
  const policy = policyOf(scenario, algorithm, burstS, own?.policy)
  // Requests per ms: demand is in units, each request `cost` of them.
  const ratePerMs = (demand * policy.limit) / policy.periodMs / (own?.cost ?? 1)
  const base = world.locations.map((location) => location.weight)
  const midMs = Math.floor(durationMs / 2 / 1000) * 1000
  const steady = (weights: readonly number[]) => () => ({ ratePerMs, weights })
  switch (scenario) {
    case 'steady':
    case 'small-key':
      return { policy, demandAt: steady(base) }
    case 'restart':
      return { policy, demandAt: steady(base), restartAtMs: midMs }
    case 'zipf':
      return { policy, demandAt: steady(zipf(base)) }
    case 'burst': {
      const busiest = base.indexOf(Math.max(...base))
      const weights = base.map((w, i) => (i === busiest ? w * BURST.times : w))
      const burst = { ratePerMs: ratePerMs * sum(weights), weights }
      return {
        policy,
        demandAt: (tMs) => (tMs >= midMs && tMs < midMs + BURST.forMs ? burst : steady(base)()),
      }
    }
    case 'shift': {
      const after = shifted(world, base)
      const steps = Array.from({ length: 11 }, (_, k) =>
        base.map((w, i) => w + ((after[i]! - w) * k) / 10)
      )
      return {
        policy,
        shiftAtMs: midMs,
        demandAt: (tMs) => {
          const k = Math.min(10, Math.max(0, Math.floor(((tMs - midMs) / SHIFT_MS) * 10) + 1))
          return { ratePerMs, weights: steps[tMs < midMs ? 0 : k]! }
        },
      }
    }
  }
}

/** Zipf over locations ranked by their default traffic: the n-th busiest gets 1/n. */
function zipf(base: readonly number[]): number[] {
  const rank = base.map((w, i) => [w, i] as const).sort((a, b) => b[0] - a[0])
  const weights = new Array<number>(base.length).fill(0)
  rank.forEach(([, i], n) => (weights[i] = 1 / (n + 1)))
  return weights
}

/**
 * Traffic after the shift: each continent keeps half of its traffic and hands the other half to
 * the next continent of the ring that has locations, spread there like that continent's own.
 */
function shifted(world: World, base: readonly number[]): number[] {
  const { locations } = world
  const present = SHIFT_RING.filter((c) => locations.some((l) => l.continent === c))
  const after = base.map((w) => w / 2)
  present.forEach((continent, k) => {
    const target = present[(k + 1) % present.length]!
    const moving = sum(
      locations.filter((l) => l.continent === continent).map((l) => base[l.index]!)
    )
    const into = locations.filter((l) => l.continent === target)
    const targetTotal = sum(into.map((l) => base[l.index]!))
    for (const l of into) after[l.index]! += (moving / 2) * (base[l.index]! / targetTotal)
  })
  return after
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0)
}
