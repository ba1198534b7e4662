/**
 * @module tools/scale/versions
 * The rule as isolates know it: its tiers (requests of one key that carry different limits, as a
 * rule's `tiers` gives them) and its versions. An edit makes a second version at `editAtMs`;
 * each isolate takes it up at its own moment of the propagation that follows (an isolate's
 * rules refresh plus KV's lag), so the two versions are in use side by side until it ends.
 */
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { stream, type Random } from './random'

/** What an edit changes. */
export type EditKind = 'none' | 'period' | 'algorithm' | 'limit' | 'tier'

/** The edits, with what each does. */
export const EDITS: Readonly<Record<EditKind, string>> = {
  none: 'no edit',
  period: 'the period doubled, with the limit (the same rate, a longer window)',
  algorithm: 'sliding window ↔ fixed window, token bucket ↔ GCRA',
  limit: 'every limit × 0.9',
  tier: 'the lowest tier’s limit halved (needs --tiers 2 or more)',
}

/** The rule's tiers and versions in one run. */
export interface RuleWorld {
  /** Tiers mixed on the key, each request one at random (1: no tiers). */
  tiers: number
  edit: EditKind
  /** When the edit is made (ms from the start). */
  editAtMs: number
  /** How long both versions are in use (ms). */
  propagationMs: number
}

/** A rule version's policy for each tier, the lowest limit first. */
export type Version = readonly LeasablePolicy[]

/**
 * The policies of a rule with `tiers` tiers: tier k's limit is (k + 1)/`tiers` of the rule's,
 * and a bucket whose burst is its limit holds its tier's limit, as `tierPolicy` gives it. With
 * more than one, each carries its tier's name.
 *
 * @param policy - the rule's policy (the top tier's)
 * @param tiers - how many tiers
 * @param burstIsLimit - whether a bucket's burst follows its limit (a rule without `burst`)
 */
export function tierPolicies(
  policy: LeasablePolicy,
  tiers: number,
  burstIsLimit: boolean
): Version {
  if (tiers <= 1) return [policy]
  return Array.from({ length: tiers }, (_, k) => {
    const limit = Math.max(1, Math.round((policy.limit * (k + 1)) / tiers))
    const tiered = { ...policy, limit, tier: `tier-${k}` }
    return 'burst' in tiered && burstIsLimit ? { ...tiered, burst: limit } : tiered
  })
}

/**
 * The version an edit makes of `before`.
 *
 * @param before - the rule's policies per tier
 * @param edit - what changes
 * @param burstIsLimit - whether a bucket's burst follows its limit
 */
export function editedVersion(before: Version, edit: EditKind, burstIsLimit: boolean): Version {
  const scaled = (policy: LeasablePolicy, factor: number): LeasablePolicy => {
    const limit = Math.max(1, Math.round(policy.limit * factor))
    const next = { ...policy, limit }
    return 'burst' in next && burstIsLimit ? { ...next, burst: limit } : next
  }
  switch (edit) {
    case 'none':
      return before
    case 'limit':
      return before.map((policy) => scaled(policy, 0.9))
    case 'tier':
      return before.map((policy, k) => (k === 0 ? scaled(policy, 0.5) : policy))
    case 'period':
      return before.map((policy) => {
        const next = { ...policy, limit: policy.limit * 2, periodMs: policy.periodMs * 2 }
        return 'burst' in next && burstIsLimit ? { ...next, burst: next.limit } : next
      })
    case 'algorithm':
      return before.map((policy): LeasablePolicy => {
        switch (policy.algorithm) {
          case 'sliding-window':
            return { ...policy, algorithm: 'fixed-window' }
          case 'fixed-window':
            return { ...policy, algorithm: 'sliding-window' }
          case 'token-bucket':
            return { ...policy, algorithm: 'gcra' }
          case 'gcra':
            return { ...policy, algorithm: 'token-bucket' }
        }
      })
  }
}

/** When each isolate takes up the edited version. */
export class Propagation {
  readonly #world: RuleWorld
  readonly #random: Random

  /**
   * @param world - the edit and its propagation
   * @param seed - the run's seed
   */
  constructor(world: RuleWorld, seed: number) {
    this.#world = world
    this.#random = stream(seed, 'propagation')
  }

  /**
   * When an isolate started now takes up the edited version (ms from the start): its own
   * moment of the propagation, or at once if it starts after it.
   */
  switchAtMs(): number {
    const { edit, editAtMs, propagationMs } = this.#world
    if (edit === 'none') return Number.POSITIVE_INFINITY
    return editAtMs + this.#random() * propagationMs
  }
}
