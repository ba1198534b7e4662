/**
 * @module tools/scale/run-options
 * What one run of the scale simulator simulates: read from the command line (`options.ts`),
 * run (`run.ts`) and reported (`summary.ts`).
 */
import type { FailMode } from '../../src/types'
import type { Mode } from './limiter-adapter'
import type { AlgorithmName, ScenarioName } from './scenarios'

/** What one run simulates. */
export interface RunOptions {
  scenario: ScenarioName
  mode: Mode
  algorithm: AlgorithmName
  isolates: number
  locations: number
  /** Demand as a multiple of the limit's rate. */
  demand: number
  seconds: number
  seed: number
  /** Time one call occupies an object (ms). */
  serviceMs: number
  /** Calls that may wait at an object before it answers "overloaded". */
  queueBound: number
  /** Mean isolate lifetime (s); `Infinity`: no churn. */
  meanLifeS: number
  /** How long a restarting object is unavailable (ms). */
  restartMs: number
  /** Seconds left out of rates, shares and percentiles (every isolate starts cold). */
  warmupS: number
  failMode: FailMode
  /**
   * A token bucket's or GCRA's burst, in seconds of its rate; when unset, its limit (what a
   * rule without `burst` gets).
   */
  burstS?: number
}
