/**
 * @module limiter/charge-call
 * What a call into the limiter is made of and what it gives back: the records the client
 * (`client.ts`) and the lease book beside it (`leases.ts`) share. Types only.
 */
import type { Policy } from '../../algorithms'
import type { UnavailableReason } from '../../errors'
import type { Decision, FailMode, Placement } from '../../types'

/**
 * One key to charge: all the client needs of a call. A rule's `Check` (`rules/plan.ts`) is one
 * as it stands, so the record the plan made is what goes in.
 */
export interface ChargeCall {
  /** The rule the key belongs to: its id names the Durable Object and the logs. */
  rule: { readonly id: string; readonly placement?: Placement }
  /** The limit key (`rules/key.ts`). */
  key: string
  /** The limit to apply. */
  policy: Policy
  /** Units to take. */
  cost: number
  /** What happens when no decision can be had. */
  failMode: FailMode
  /** `leased`: decided from units this isolate reserved in advance (`leases.ts`). */
  consistency?: 'exact' | 'leased'
  /**
   * Charged later (a rule counting responses): now the key is only checked, and charged only
   * if it refuses (`gate`).
   */
  deferred?: boolean
}

/** The key a call names, for a look or a reset. */
export type KeyRef = Pick<ChargeCall, 'rule' | 'key'>

/**
 * A decision (`local` when this isolate answered it without a call; `decidedAtMs`, the root's
 * clock, when the root took it by charging units for the request while it waited), or the
 * record that none could be had and the key failed open.
 */
export type ChargeResult =
  | {
      enforced: true
      decision: Decision
      local?: true
      decidedAtMs?: number
      /** Leased: when the key's root charged the units spent (its clock). */
      chargedAtMs?: number
    }
  | { enforced: false; reason: UnavailableReason }
