/**
 * @module algorithms
 * The algorithm registry: one entry per `algorithm` name a rule may use.
 */
import { fixedWindow } from './fixed-window'
import { gcra } from './gcra'
import { leakyBucket } from './leaky-bucket'
import { slidingLog } from './sliding-log'
import { keyExpiresAtMs, withPenalty, type KeyState } from './penalty'
import { slidingWindow } from './sliding-window'
import { tokenBucket } from './token-bucket'
import type { Algorithm, AlgorithmName, Outcome, Policy } from './types'

export type * from './types'
export type { SlidingWindowState } from './sliding-window'
export type { TokenBucketState } from './token-bucket'
export type { FixedWindowState } from './fixed-window'
export type { GcraState } from './gcra'
export type { LeakyBucketState } from './leaky-bucket'
export { MAX_SLIDING_LOG_LIMIT, type SlidingLogState } from './sliding-log'
export type { KeyState } from './penalty'
export { fixedWindow, gcra, leakyBucket, slidingLog, slidingWindow, tokenBucket }

/** Every algorithm by name. */
export const ALGORITHMS = {
  'sliding-window': slidingWindow,
  'token-bucket': tokenBucket,
  'fixed-window': fixedWindow,
  'sliding-log': slidingLog,
  gcra,
  'leaky-bucket': leakyBucket,
} as const satisfies { [N in AlgorithmName]: Algorithm<Extract<Policy, { algorithm: N }>, unknown> }

/** The algorithm names, for validation messages. */
export const ALGORITHM_NAMES = Object.keys(ALGORITHMS) as AlgorithmName[]

/**
 * Runs the policy's algorithm. The state is opaque here: the caller stores whatever the
 * algorithm returned for this policy and hands it back unchanged.
 *
 * @param state - the stored state, or `undefined` for a key never seen (or expired)
 * @param policy - the limit to apply
 * @param nowMs - the current time, read once by the caller
 * @param cost - units to take (0 to only look)
 * @returns the next state and the decision
 */
export function runAlgorithm(
  state: unknown,
  policy: Policy,
  nowMs: number,
  cost: number
): Outcome<unknown> {
  switch (policy.algorithm) {
    case 'sliding-window':
      return slidingWindow.consume(state as never, policy, nowMs, cost)
    case 'token-bucket':
      return tokenBucket.consume(state as never, policy, nowMs, cost)
    case 'fixed-window':
      return fixedWindow.consume(state as never, policy, nowMs, cost)
    case 'sliding-log':
      return slidingLog.consume(state as never, policy, nowMs, cost)
    case 'gcra':
      return gcra.consume(state as never, policy, nowMs, cost)
    case 'leaky-bucket':
      return leakyBucket.consume(state as never, policy, nowMs, cost)
    default:
      return assertNever(policy)
  }
}

/**
 * When a stored state may be deleted (Unix ms).
 *
 * @param state - a state `runAlgorithm` returned for this policy
 * @param policy - the policy it was computed under
 */
export function stateExpiresAtMs(state: unknown, policy: Policy): number {
  switch (policy.algorithm) {
    case 'sliding-window':
      return slidingWindow.expiresAtMs(state as never, policy)
    case 'token-bucket':
      return tokenBucket.expiresAtMs(state as never, policy)
    case 'fixed-window':
      return fixedWindow.expiresAtMs(state as never, policy)
    case 'sliding-log':
      return slidingLog.expiresAtMs(state as never, policy)
    case 'gcra':
      return gcra.expiresAtMs(state as never, policy)
    case 'leaky-bucket':
      return leakyBucket.expiresAtMs(state as never, policy)
    default:
      return assertNever(policy)
  }
}

function assertNever(value: never): never {
  throw new TypeError(`unknown algorithm: ${JSON.stringify(value)}`)
}

/**
 * Decides a request for one key: the policy's algorithm inside the penalty box. This is what
 * the Durable Object runs.
 *
 * @param key - the stored key state, or `undefined` for a key never seen (or expired)
 * @param policy - the limit to apply
 * @param nowMs - the current time, read once by the caller
 * @param cost - units to take (0 to only look)
 * @returns the next key state (the very object passed in when nothing changed) and the decision
 */
export function consumeKey(
  key: KeyState | undefined,
  policy: Policy,
  nowMs: number,
  cost: number
): Outcome<KeyState> {
  return withPenalty(key, policy, nowMs, cost, (state, units) =>
    runAlgorithm(state, policy, nowMs, units)
  )
}

/**
 * When a stored key state may be deleted (Unix ms).
 *
 * @param key - a key state `consumeKey` returned for this policy
 * @param policy - the policy it was computed under
 */
export function keyStateExpiresAtMs(key: KeyState, policy: Policy): number {
  return keyExpiresAtMs(
    key,
    key.state === undefined ? undefined : stateExpiresAtMs(key.state, policy)
  )
}
