/**
 * @module tools/fleet/compare
 * `--compare`: the scale simulator (`tools/scale/run`, called in this process) in the fleet's
 * world: the same locations (so the same regions, traffic shares and hops), isolates, algorithm,
 * limit, period, cost and demand, the root's service time the fleet measured, one clock and every
 * answer delivered (one machine's workerd), no isolate churn, and the fleet's deploy where it had
 * one. Its figures come back in the fleet's shape.
 */
import { IDEAL_WORLD } from '../scale/run-options'
import { runScale } from '../scale/run'
import type { FleetOptions } from './options'
import type { Comparable } from './report'
import { allowedPerWindow } from './rules'
import { WARMUP_S, type FleetSummary } from './summary'

/**
 * Runs the scale simulator in the fleet's world.
 *
 * @param options - the fleet's run
 * @param fleet - what the fleet measured
 */
export async function compareWithSimulator(
  options: FleetOptions,
  fleet: FleetSummary
): Promise<Comparable> {
  const deploy = options.scenario === 'deploy' && fleet.fault ? fleet.fault : undefined
  const { summary, rows } = await runScale({
    scenario: 'steady',
    mode: 'leased',
    algorithm: options.algorithm,
    isolates: options.isolates,
    locations: options.locations,
    demand: options.demand,
    seconds: options.seconds,
    seed: options.seed,
    serviceMs: Math.max(0.001, fleet.rootServiceMs ?? 1),
    queueBound: 100,
    meanLifeS: Number.POSITIVE_INFINITY,
    restartMs: deploy ? Math.round(deploy.forS * 1000) : 200,
    warmupS: WARMUP_S,
    failMode: options.failMode,
    world: { ...IDEAL_WORLD, ...(deploy ? { deployAtS: deploy.atS } : {}) },
    policy: { limit: options.limit, periodMs: options.periodMs },
    cost: options.cost,
  })
  const periodS = options.periodMs / 1000
  const windows = []
  for (let start = 0; start < rows.length; start += periodS) {
    const admitted = rows.slice(start, start + periodS).reduce((a, r) => a + r.admitted, 0)
    windows.push({
      startMs: start * 1000,
      admitted: admitted * options.cost,
      allowed: allowedPerWindow(options),
    })
  }
  return {
    windows,
    overAdmitted: summary.overAdmitted * options.cost,
    calls: {
      root: summary.objectCallsPerSecond,
      regional: summary.tierCallsPerSecond.regional,
      location: summary.tierCallsPerSecond.location,
    },
    localShare: Math.round(summary.localShare * 10_000) / 10_000,
    latencyMs: summary.latencyMs,
    errors5xx: 0,
    isolateMemoryMb: null,
  }
}
