/**
 * @module algorithms/penalty
 * The penalty box around any algorithm: once a key is denied under a policy with `penaltyMs`,
 * every request is denied until the lock ends (e.g. 5 logins per minute, then 15 minutes out).
 * While locked, the algorithm's own state is left alone; when the lock ends, counting resumes
 * from where it was.
 */
import type { Decision } from '../types'
import type { Outcome, Policy } from './types'

/** What the Durable Object keeps for a key. */
export interface KeyState {
  /** The algorithm's state (absent until something was charged). */
  state?: unknown
  /** End of the penalty lock (Unix ms), if one was imposed. */
  blockedUntilMs?: number
}

/** Runs the algorithm: `run(state, cost)` for the current time. */
type Run = (state: unknown, cost: number) => Outcome<unknown>

/**
 * Applies the penalty box around one run of an algorithm.
 *
 * @param key - the stored key state
 * @param policy - the policy (its `penaltyMs` decides whether a denial locks the key)
 * @param nowMs - the current time
 * @param cost - units to take
 * @param run - the algorithm for this policy at `nowMs`
 * @returns the next key state (the very object passed in when nothing changed) and the decision
 */
export function withPenalty(
  key: KeyState | undefined,
  policy: Policy,
  nowMs: number,
  cost: number,
  run: Run
): Outcome<KeyState> {
  const blockedUntilMs = key?.blockedUntilMs
  if (blockedUntilMs !== undefined && nowMs < blockedUntilMs) {
    // Looking (cost 0) keeps the algorithm's state as it is, so the lock costs nothing.
    return { state: key, decision: locked(run(key?.state, 0).decision, nowMs, blockedUntilMs) }
  }
  const outcome = run(key?.state, cost)
  if (!outcome.decision.allowed && policy.penaltyMs !== undefined && cost > 0) {
    const until = nowMs + policy.penaltyMs
    const next: KeyState = { blockedUntilMs: until }
    if (key?.state !== undefined) next.state = key.state
    return { state: next, decision: locked(outcome.decision, nowMs, until) }
  }
  // Nothing charged: keep the very object (an ended lock may stay in it; it no longer blocks).
  if (outcome.state === key?.state) return { state: key, decision: outcome.decision }
  // Any ended lock is dropped with this write.
  return { state: { state: outcome.state }, decision: outcome.decision }
}

/** When a key state may be deleted: the later of the algorithm's expiry and the lock's end. */
export function keyExpiresAtMs(key: KeyState, algorithmExpiresAtMs: number | undefined): number {
  return Math.max(algorithmExpiresAtMs ?? 0, key.blockedUntilMs ?? 0)
}

function locked(decision: Decision, nowMs: number, untilMs: number): Decision {
  return {
    allowed: false,
    limit: decision.limit,
    remaining: 0,
    resetAtMs: Math.max(decision.resetAtMs, untilMs),
    retryAfterMs: Math.max(decision.retryAfterMs, untilMs - nowMs),
  }
}
