/**
 * @module rules/envoy/limit-block
 * One `rate_limit` block of an envoyproxy/ratelimit configuration, checked as that service does
 * and compiled with the policy its counter runs.
 */
import type { Policy } from '../../algorithms'
import type { EnvoyAlgorithm, EnvoyLimit, Raw } from './types'
import { parseUnit, MAX_UINT32, UNIT_SECONDS, type EnvoyUnit } from './units'

/** The algorithms a block may name. */
const ENVOY_ALGORITHMS: readonly EnvoyAlgorithm[] = [
  'fixed-window',
  'sliding-window',
  'token-bucket',
]

/**
 * Compiles a `rate_limit` block, or reports what is wrong with it.
 *
 * @param raw - the block
 * @param descriptor - the descriptor holding it (for `shadow_mode` and `quota_mode`)
 * @param report - takes each problem
 */
export function loadLimit(
  raw: Raw,
  descriptor: Raw,
  report: (message: string) => void
): EnvoyLimit | undefined {
  const unlimited = raw.unlimited === true
  const unit = parseUnit(raw.unit)
  if (raw.unlimited !== undefined && typeof raw.unlimited !== 'boolean')
    return void report('error loading config file: unlimited must be true or false')
  if (unlimited && unit) return void report('should not specify rate limit unit when unlimited')
  if (!unlimited && !unit) return void report(`invalid rate limit unit '${raw.unit ?? ''}'`)
  const perUnit = raw.requests_per_unit ?? 0
  if (
    typeof perUnit !== 'number' ||
    !Number.isInteger(perUnit) ||
    perUnit < 0 ||
    perUnit > MAX_UINT32
  ) {
    return void report(
      `error loading config file: requests_per_unit must be a whole number from 0 to ${MAX_UINT32}, not ${JSON.stringify(perUnit)}`
    )
  }
  const name = raw.name ?? ''
  if (typeof name !== 'string')
    return void report('error loading config file: name must be a string')
  if (raw.replaces !== undefined && raw.replaces !== null && !Array.isArray(raw.replaces))
    return void report('error loading config file: replaces must be a list of { name }')
  const replaces: string[] = []
  for (const entry of Array.isArray(raw.replaces) ? (raw.replaces as Raw[]) : []) {
    if (typeof entry.name !== 'string' || entry.name === '')
      return void report('should not have an empty replaces entry')
    if (entry.name === name)
      return void report('replaces should not contain name of same descriptor')
    replaces.push(entry.name)
  }
  const named = raw.algorithm ?? 'fixed-window'
  const algorithm = ENVOY_ALGORITHMS.find((name) => name === named)
  if (!algorithm)
    return void report(
      `algorithm must be one of ${ENVOY_ALGORITHMS.join(', ')}, not ${JSON.stringify(raw.algorithm)}`
    )
  if (algorithm !== 'fixed-window' && perUnit === 0 && !unlimited)
    return void report(`algorithm ${algorithm} needs requests_per_unit of at least 1`)
  const block = {
    requestsPerUnit: perUnit,
    name,
    replaces,
    shadow: descriptor.shadow_mode === true,
    quota: descriptor.quota_mode === true,
  }
  if (!unit) return { ...block, unlimited: true }
  const policy = envoyPolicy(algorithm, perUnit, unit)
  return { ...block, unlimited: false, unit, algorithm, policy }
}

/**
 * The policy a counter of `requestsPerUnit` per `unit` runs.
 *
 * @param algorithm - the block's algorithm
 * @param requestsPerUnit - its limit per unit
 * @param unit - its unit: the window, or the time a bucket takes to refill
 */
export function envoyPolicy(
  algorithm: EnvoyAlgorithm,
  requestsPerUnit: number,
  unit: EnvoyUnit
): Policy {
  const periodMs = UNIT_SECONDS[unit] * 1000
  if (algorithm === 'token-bucket')
    return { algorithm, limit: requestsPerUnit, periodMs, burst: requestsPerUnit }
  if (algorithm === 'sliding-window') return { algorithm, limit: requestsPerUnit, periodMs }
  // envoyproxy/ratelimit increments before it compares, so an over-limit hit still counts.
  return { algorithm, limit: requestsPerUnit, periodMs, countDenied: true }
}
