/**
 * @module tools/scale/run-options
 * What one run of the scale simulator simulates: read from the command line (`options.ts`),
 * run (`run.ts`) and reported (`summary.ts`).
 */
import type { FailMode } from '../../src/types'
import { MACHINE_KINDS, type ClockWorld } from './clocks'
import type { Mode } from './limiter-adapter'
import type { AlgorithmName, ScenarioName } from './scenarios'
import type { EditKind } from './versions'

/**
 * The conditions a run's machines and rules are in: how far clocks are off, the rule's tiers
 * and an edit while the run lasts, answers lost on their way back, a deploy. The defaults
 * ({@link DEFAULT_WORLD}) are the real world's, not an ideal one's.
 */
export interface SimWorld {
  clocks: ClockWorld
  /** Tiers mixed on the key (1: none). */
  tiers: number
  /** What an edit of the rule changes, made while the run lasts. */
  edit: EditKind
  /** When the edit is made (s from the start); half the run when unset. */
  editAtS?: number
  /** How long the versions before and after an edit are both in use (s). */
  propagationS: number
  /** The share of calls that reach their object and run, whose answer is lost (a retryable error). */
  lostAnswers: number
  /** A deploy at this second: every isolate and every object's instance replaced at once. */
  deployAtS?: number
}

/**
 * A world as unkind as the real one: each machine's clock off by up to ±50 ms and drifting by up
 * to ±20 ppm; an edit of the limit (× 0.9) at half the run, both versions in use for 60 s (a
 * rules refresh of 60 s, KV's lag within it); one answer in a thousand lost.
 */
export const DEFAULT_WORLD: SimWorld = {
  clocks: { skewMs: 50, driftPpm: 20, skewOn: MACHINE_KINDS },
  tiers: 1,
  edit: 'limit',
  propagationS: 60,
  lostAnswers: 0.001,
}

/** A world with none of that: one clock, one version, every answer delivered. */
export const IDEAL_WORLD: SimWorld = {
  clocks: { skewMs: 0, driftPpm: 0, skewOn: [] },
  tiers: 1,
  edit: 'none',
  propagationS: 0,
  lostAnswers: 0,
}

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
  /** The conditions it runs in. */
  world: SimWorld
  /** The key's limit and period, if not the scenario's (the fleet's world, `npm run fleet -- --compare`). */
  policy?: { limit: number; periodMs: number }
  /** Units each request costs (default 1). */
  cost?: number
}
