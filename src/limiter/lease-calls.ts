/**
 * @module limiter/lease-calls
 * The two calls a lease book makes to a key's object, reserve and refund: timed out, counted in
 * the isolate's stats like every other call; what a request gets when they fail, and how they
 * are kept running past the request that started them.
 */
import { waitUntil } from 'cloudflare:workers'
import type { LeasablePolicy } from '../algorithms/reserve'
import type { LimiterUnavailableError } from '../errors'
import type { Placement } from '../types'
import type { ChargeCall, ChargeResult, LimiterNamespace } from './charge-call'
import { nameOf, stubOf } from './object-name'
import type { Reservation } from './rate-limiter-object'
import { unavailableOf, withRetry, withTimeout } from './rpc'
import type { ClientStats } from './stats'
import { logEvent } from '../log'

/** Where the calls go and how they are counted. */
export interface LeaseCallContext {
  namespace: LimiterNamespace
  stats: ClientStats
  timeoutMs: number
}

/** The key a lease is for. */
export interface LeaseKey {
  ruleId: string
  /** Where the rule's objects live, if it says. */
  placement?: Placement
  key: string
}

/** The stub of a lease's key, named and placed as on the exact path. */
async function stubFor(to: LeaseCallContext, lease: LeaseKey) {
  const rule = { id: lease.ruleId, ...(lease.placement ? { placement: lease.placement } : {}) }
  return stubOf(to.namespace, rule, await nameOf({ rule, key: lease.key }))
}

/**
 * Reserves up to `units` (at least `minUnits`, or none) in the key's object. A failure the
 * runtime marks retryable is retried once: units a lost answer granted are only lost, never
 * spent twice.
 *
 * @throws {LimiterUnavailableError} on a timeout or an error
 */
export async function reserveUnits(
  to: LeaseCallContext,
  lease: LeaseKey,
  policy: LeasablePolicy,
  units: number,
  minUnits: number
): Promise<Reservation> {
  const once = withRetry(async () => {
    const stub = await stubFor(to, lease)
    return counted(to.stats, lease.ruleId, () => stub.reserve(policy, units, minUnits))
  })
  return withTimeout(once, to.timeoutMs).catch((error: unknown) => {
    throw unavailableOf(error)
  })
}

/**
 * Hands unspent units back. Never throws: a refund that fails leaves the units charged, which
 * only errs on the safe side.
 */
export async function refundUnits(
  to: LeaseCallContext,
  lease: LeaseKey,
  policy: LeasablePolicy,
  lot: { units: number; chargedAtMs: number; epoch: string }
): Promise<void> {
  try {
    const stub = await stubFor(to, lease)
    await withTimeout(
      counted(to.stats, lease.ruleId, () =>
        stub.refund(policy, lot.units, lot.chargedAtMs, lot.epoch)
      ),
      to.timeoutMs
    )
  } catch (error) {
    logEvent('warn', 'lease-refund-failed', { rule: lease.ruleId, error: String(error) })
  }
}

/**
 * What a request gets when no decision could be had (a call failed or timed out): its fail mode,
 * logged; on the exact path and the leased one alike.
 *
 * @param stats - where fail-opens are counted
 * @param call - the request's check
 * @param error - why no reservation could be had
 * @throws {LimiterUnavailableError} when the key fails closed
 */
export function failedCharge(
  stats: ClientStats,
  call: ChargeCall,
  error: LimiterUnavailableError
): ChargeResult {
  if (call.failMode === 'closed') throw error
  stats.failedOpen(call.rule.id)
  logEvent('warn', 'rate-limit-fail-open', {
    rule: call.rule.id,
    reason: error.reason,
    error: String(error.cause ?? error.message),
  })
  return { enforced: false, reason: error.reason }
}

/**
 * Keeps a background call running past the current request (`waitUntil`).
 *
 * @param promise - the call
 */
export function keepAliveInRequest(promise: Promise<unknown>): void {
  try {
    waitUntil(promise)
  } catch {
    // Outside a request (no context to extend): the promise runs as long as the isolate does.
  }
}

function counted<T>(stats: ClientStats, ruleId: string, send: () => Promise<T>): Promise<T> {
  const done = stats.call(ruleId, Date.now())
  return send().finally(() => done(Date.now()))
}
