/**
 * @module limiter/rate-limiter-object
 * The Durable Object that holds one limit key's state. A thin shell around `algorithms/`:
 * it knows nothing about rules; the policy arrives with every call.
 */
import { DurableObject } from 'cloudflare:workers'
import { consumeKey, keyStateExpiresAtMs, type KeyState, type Policy } from '../algorithms'
import type { Decision } from '../types'

/** The stored record: the algorithm's state plus what it was computed under. */
interface StoredState {
  /** Algorithm and period the state belongs to; a rule edit that changes them starts afresh. */
  algorithm: Policy['algorithm']
  periodMs: number
  /** The key's state: the algorithm's, and any penalty lock. */
  state: KeyState
  /** When the state is equivalent to none (Unix ms). */
  expiresAtMs: number
}

const STATE_KEY = 'state'

/**
 * One instance per limit key (rule id + key values). Reads its state synchronously, runs the
 * algorithm, writes, and arms an alarm that deletes the state once the key has gone idle.
 */
export class RateLimiterObject extends DurableObject<Env> {
  /** The alarm this instance has armed, if it knows of one. */
  #alarmAtMs: number | undefined

  /**
   * Takes `cost` units under `policy` and reports the decision.
   *
   * @param policy - the limit to apply
   * @param cost - units to take; 0 only looks
   */
  consume(policy: Policy, cost: number): Decision {
    // One clock read per call: in production Date.now() is frozen while this runs anyway.
    const nowMs = Date.now()
    // No await between the read and the write: the input gate makes this atomic per key.
    const kv = this.ctx.storage.kv
    const stored = kv.get<StoredState>(STATE_KEY)
    const current =
      stored && stored.algorithm === policy.algorithm && stored.periodMs === policy.periodMs
        ? stored.state
        : undefined
    const { state, decision } = consumeKey(current, policy, nowMs, cost)
    if (state !== undefined && state !== current) {
      const expiresAtMs = keyStateExpiresAtMs(state, policy)
      kv.put<StoredState>(STATE_KEY, {
        algorithm: policy.algorithm,
        periodMs: policy.periodMs,
        state,
        expiresAtMs,
      })
      this.#armAlarm(expiresAtMs)
    }
    return decision
  }

  /** Forgets the key's state. */
  reset(): void {
    void this.ctx.storage.deleteAll()
    this.#alarmAtMs = undefined
  }

  /** Deletes the state if the key is idle; otherwise re-arms for when it will be. */
  override async alarm(): Promise<void> {
    this.#alarmAtMs = undefined
    const stored = this.ctx.storage.kv.get<StoredState>(STATE_KEY)
    if (!stored) return
    if (Date.now() >= stored.expiresAtMs) {
      // Since compatibility date 2026-02-24 deleteAll() also clears the alarm.
      await this.ctx.storage.deleteAll()
      return
    }
    this.#armAlarm(stored.expiresAtMs)
  }

  /**
   * Arms the alarm only when none is known: a busy key then costs one alarm write per idle
   * period instead of one per request. An alarm that fires early finds the newer expiry in
   * storage and re-arms.
   */
  #armAlarm(atMs: number): void {
    if (this.#alarmAtMs !== undefined && this.#alarmAtMs <= atMs) return
    this.#alarmAtMs = atMs
    void this.ctx.storage.setAlarm(atMs)
  }
}
