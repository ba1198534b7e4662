// What `npm run bench` measures. Each scenario runs on a fresh instance of every target (bare,
// the project, the naive limiter, the peer), so no state or alarm carries over between them.
import type { LimitSpec } from './limiters.ts'
import type { KeyMode } from './load.ts'

/**
 * - `load`: a warm-up, then closed-loop load for the run's duration, compared with bare.
 * - `alarms-due`: the hot key measured while the cleanup alarms of many idle keys come due.
 * - `alarm-cost`: the same idle keys with no load: what their cleanup costs workerd.
 * - `exactness`: 300 requests at 50 in flight against a limit of 100, once per run.
 */
export type ScenarioKind = 'load' | 'alarms-due' | 'alarm-cost' | 'exactness'

/** One scenario. */
export interface Scenario {
  name: string
  kind: ScenarioKind
  keys: KeyMode
  spec: LimitSpec
  /** Run in the first rep only (no throughput to compare across reps). */
  once?: boolean
}

/** A limit no load reaches: every request is allowed and charged. */
const UNREACHABLE = 1_000_000_000
const HOUR_S = 3600
/**
 * The watched scenario's limit and near-limit fraction: a key crosses at remaining ≤ 997.5,
 * its third request, and is never limited in a run (a key gets a few dozen requests at most).
 */
const WATCHED_LIMIT = 1000
const WATCHED_NEAR_LIMIT = 0.0025

/**
 * The period of the alarm scenarios when no many-keys run has timed key creation. Otherwise it
 * is chosen from that time (see `alarmPeriodS`).
 */
export const DEFAULT_ALARM_PERIOD_S = 20

/** Every scenario, in the order a rep runs them. */
export const SCENARIOS: readonly Scenario[] = [
  { name: 'hot-key', kind: 'load', keys: 'hot', spec: { limit: UNREACHABLE, periodS: HOUR_S } },
  // The Worker's own share: rules are loaded and checked, but none matches, so no Durable Object.
  {
    name: 'no-match',
    kind: 'load',
    keys: 'hot',
    spec: { limit: UNREACHABLE, periodS: HOUR_S, path: '/elsewhere/*' },
  },
  { name: 'many-keys', kind: 'load', keys: 'many', spec: { limit: UNREACHABLE, periodS: HOUR_S } },
  // What every operator turns on, on many keys: the live view, near-limit alerts (POSTed to a
  // webhook) and hidden keys (HMAC). Every key crosses its near-limit on its third request (the
  // warm-up's two passes gave it its first two), so the run raises one event per key: 10 a minute are announced,
  // their keys hashed, the rest counted. No key is limited.
  {
    name: 'watched-keys',
    kind: 'load',
    keys: 'many',
    spec: { limit: WATCHED_LIMIT, periodS: HOUR_S, nearLimit: WATCHED_NEAR_LIMIT },
  },
  { name: 'new-keys', kind: 'load', keys: 'new', spec: { limit: UNREACHABLE, periodS: HOUR_S } },
  // The warm-up alone spends the limit: nearly every measured request is denied.
  { name: 'mostly-denied', kind: 'load', keys: 'hot', spec: { limit: 10, periodS: HOUR_S } },
  {
    name: 'leased-hot-key',
    kind: 'load',
    keys: 'hot',
    spec: { limit: UNREACHABLE, periodS: HOUR_S, consistency: 'leased' },
  },
  // The period is set per run (alarmPeriodS): short, so that the idle keys' alarms come due
  // during the measured run.
  { name: 'alarms-due', kind: 'alarms-due', keys: 'hot', spec: { limit: UNREACHABLE, periodS: 0 } },
  {
    name: 'alarm-cost',
    kind: 'alarm-cost',
    keys: 'many',
    spec: { limit: UNREACHABLE, periodS: 0 },
    once: true,
  },
  {
    name: 'exactness',
    kind: 'exactness',
    keys: 'hot',
    spec: { limit: 100, periodS: HOUR_S },
    once: true,
  },
  {
    name: 'exactness-leased',
    kind: 'exactness',
    keys: 'hot',
    spec: { limit: 100, periodS: HOUR_S, consistency: 'leased' },
    once: true,
  },
]

/**
 * The alarm scenarios' period: long enough that creating all the idle keys fits in one
 * window (so that the project's keys, whose state expires two aligned periods after the
 * window they were charged in, all come due at one instant, as after a traffic spike), and
 * no longer, so that the run waits as little as it can.
 *
 * @param creationSeconds - the longest any target took to create the many-keys scenario's keys
 */
export function alarmPeriodS(creationSeconds: number | undefined): number {
  if (creationSeconds === undefined) return DEFAULT_ALARM_PERIOD_S
  return Math.min(120, Math.max(10, Math.ceil((creationSeconds * 1.5) / 5) * 5))
}
