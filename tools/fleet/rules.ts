/**
 * @module tools/fleet/rules
 * The fleet's rules: one leased rule over every path, one key for all (`"key": []`), its cost
 * from the `x-cost` header; and what the exact limit allows in a window under it.
 */
import type { FleetOptions } from './options'

/** The rule's id, and so the key's root object's name prefix. */
export const RULE_ID = 'fleet'

/**
 * The rules document for a run, with the limit scaled (an edit's version is × 0.9).
 *
 * @param options - the run
 * @param limit - the limit in units (the run's, or an edit's)
 */
export function rulesDocument(options: FleetOptions, limit = options.limit): unknown {
  const bucket = options.algorithm === 'token-bucket' || options.algorithm === 'gcra'
  return {
    version: 1,
    rules: [
      {
        id: RULE_ID,
        match: { path: '/*' },
        key: [],
        algorithm: options.algorithm,
        limit,
        period: `${options.periodMs / 1000}s`,
        ...(bucket ? { burst: limit } : {}),
        consistency: 'leased',
        cost: { header: 'x-cost', max: 100, default: 1 },
        failMode: options.failMode,
      },
    ],
  }
}

/**
 * Units the exact limit admits at most in one aligned window: the limit, and for a bucket its
 * burst (the limit) on top.
 *
 * @param options - the run
 * @param limit - the version's limit
 */
export function allowedPerWindow(options: FleetOptions, limit = options.limit): number {
  const bucket = options.algorithm === 'token-bucket' || options.algorithm === 'gcra'
  return bucket ? 2 * limit : limit
}

/** The version after an edit: the limit × 0.9, as the simulator's default edit. */
export function editedLimit(limit: number): number {
  return Math.floor(limit * 0.9)
}
