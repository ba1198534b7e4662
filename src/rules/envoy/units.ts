/**
 * @module rules/envoy/units
 * envoyproxy/ratelimit's time units and their window lengths.
 */

/** Window length in seconds per unit, as envoyproxy/ratelimit divides time (a month is 30 days). */
export const UNIT_SECONDS = {
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3_600,
  DAY: 86_400,
  WEEK: 604_800,
  MONTH: 2_592_000,
  YEAR: 31_536_000,
} as const

/** A unit name as envoyproxy/ratelimit's API spells it. */
export type EnvoyUnit = keyof typeof UNIT_SECONDS

/** Enum numbers of the units in the `RateLimitResponse.RateLimit.Unit` proto. */
export const UNIT_NUMBERS: Record<number, EnvoyUnit> = {
  1: 'SECOND',
  2: 'MINUTE',
  3: 'HOUR',
  4: 'DAY',
  5: 'MONTH',
  6: 'YEAR',
  7: 'WEEK',
}

/**
 * The unit named by `value` (case-insensitive, as envoyproxy/ratelimit reads YAML), if valid.
 *
 * @param value - a unit name
 */
export function parseUnit(value: unknown): EnvoyUnit | undefined {
  if (typeof value !== 'string') return undefined
  const unit = value.toUpperCase()
  return unit in UNIT_SECONDS ? (unit as EnvoyUnit) : undefined
}

/** The largest protobuf uint32: Envoy's bound for counts, and its "no limit" remaining. */
export const MAX_UINT32 = 4_294_967_295
