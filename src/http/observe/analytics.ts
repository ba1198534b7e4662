/**
 * @module http/observe/analytics
 * One Workers Analytics Engine data point per rule decision (docs/operations.md, "Metrics and alerts"). Points are
 * written after the response, from `waitUntil`: the key hash is computed there.
 */
import type { Check } from '../../rules'
import type { Decision } from '../../types'
import type { KeyHasher } from './key-hash'
import { logEvent } from '../../log'
import type { MetricsDataset } from '../shared/wiring'

/** What a data point records as `blob2`. */
export type MetricOutcome =
  'allowed' | 'limited' | 'shadow-limited' | 'degraded' | 'near-limit' | 'fail-open' | 'fail-closed'

/** Where a decision was taken (`blob3`). */
export type DecidedWhere = 'local' | 'durable-object'

/** One point to write: the check, what came of it, and the decision if there was one. */
export interface MetricEvent {
  check: Check
  outcome: MetricOutcome
  decision?: Decision
}

/**
 * Where a decision was taken. A decision answered in the isolate carries `local: true`; every
 * other was a Durable Object's.
 *
 * @param decision - the decision, if any
 */
export function decidedWhere(decision: Decision | undefined): DecidedWhere {
  return (decision as { local?: boolean } | undefined)?.local === true ? 'local' : 'durable-object'
}

/**
 * Writes one data point per event. Never throws: metrics never change a decision.
 *
 * @param dataset - the `RATE_LIMIT_METRICS` binding
 * @param events - the request's events
 * @param country - the request's country (`request.cf.country`), or ''
 * @param hasher - hashes the limit keys (`index1`)
 */
export async function writeMetrics(
  dataset: MetricsDataset,
  events: readonly MetricEvent[],
  country: string,
  hasher: KeyHasher
): Promise<void> {
  try {
    for (const { check, outcome, decision } of events) {
      dataset.writeDataPoint({
        blobs: [
          check.rule.id,
          outcome,
          decidedWhere(decision),
          check.rule.paths.join(','),
          country,
        ],
        doubles: [
          check.cost,
          // The sample rate's inverse: every decision is written today; SQL multiplies by it.
          1,
          decision?.remaining ?? 0,
          decision?.limit ?? check.policy.limit,
          decision?.retryAfterMs ?? 0,
        ],
        indexes: [await hasher.hash(check.key)],
      })
    }
  } catch (error) {
    logEvent('warn', 'metrics-write-failed', { error: String(error) })
  }
}
