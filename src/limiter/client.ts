/**
 * @module limiter/client
 * The only way into the Durable Objects: naming, timeouts, retries, errors and the fail
 * policy all live here, so caching and hot-key leasing can be added in one place later.
 */
import type { ConcurrencyPolicy, Policy } from '../algorithms'
import { LimiterUnavailableError, type UnavailableReason } from '../errors'
import type { Decision, FailMode } from '../types'
import { isolateLeases } from './leases'
import { objectName } from './object-name'
import type { RateLimiterObject } from './rate-limiter-object'
import { clientStats } from './stats'

/** The Durable Object namespace the limiter counts in. */
export type LimiterNamespace = DurableObjectNamespace<RateLimiterObject>

/**
 * One key to charge: all the client needs of a call. A rule's `Check` (`rules/plan.ts`) is one
 * as it stands, so the record the plan made is what goes in.
 */
export interface ChargeCall {
  /** The rule the key belongs to: its id names the Durable Object and the logs. */
  rule: { readonly id: string }
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
}

/** The key a call names, for a look or a reset. */
export type KeyRef = Pick<ChargeCall, 'rule' | 'key'>

/** A decision, or the record that none could be had and the key failed open. */
export type ChargeResult =
  { enforced: true; decision: Decision } | { enforced: false; reason: UnavailableReason }

/**
 * Charges one key in its Durable Object, within `timeoutMs`. A concurrency limit takes a slot,
 * waiting in the key's queue up to the policy's `maxWaitMs` on top of `timeoutMs`; its decision
 * says `timedOut` when that wait ran out.
 *
 * A failure is retried once on a fresh stub when the runtime marks it retryable and not an
 * overload; a charge is not idempotent, so a retry may count twice, which errs on the safe side.
 * A slot is never retried: a queued acquire that reached the object may already hold one. If
 * it still fails, `failMode: 'open'` resolves `{ enforced: false }` (and logs), `'closed'`
 * throws. A call that timed out is not cancelled and may still be counted when it lands.
 *
 * @param namespace - the `LIMITER` binding
 * @param call - the key, policy, cost and fail mode
 * @param timeoutMs - the longest wait for a decision
 * @throws {LimiterUnavailableError} when the key fails closed
 */
export async function charge(
  namespace: LimiterNamespace,
  call: ChargeCall,
  timeoutMs: number
): Promise<ChargeResult> {
  if (call.consistency === 'leased') return isolateLeases().charge(namespace, call, timeoutMs)
  const { policy, cost, rule } = call
  if (policy.algorithm === 'concurrency')
    return chargeWith(call, timeoutMs + policy.maxWaitMs, (name) =>
      counted(rule.id, () => namespace.getByName(name).acquire(policy))
    )
  return chargeWith(call, timeoutMs, (name) =>
    withRetry(() => counted(rule.id, () => namespace.getByName(name).charge(policy, cost)))
  )
}

/** Makes one call to a limiter object, counted in this isolate's stats. */
function counted<T>(ruleId: string, send: () => Promise<T>): Promise<T> {
  // Date.now() moves across I/O even where it is frozen during execution: enough for latency.
  const done = clientStats().call(ruleId, Date.now())
  return send().finally(() => done(Date.now()))
}

/** Asks the key's object through `ask`, within `timeoutMs`, applying the call's fail mode. */
async function chargeWith(
  call: ChargeCall,
  timeoutMs: number,
  ask: (name: string) => Promise<Decision>
): Promise<ChargeResult> {
  try {
    const name = await objectName(call.rule.id, call.key)
    const decision = await withTimeout(ask(name), timeoutMs)
    clientStats().decided(call.rule.id, 'durableObject')
    return { enforced: true, decision }
  } catch (error) {
    const unavailable =
      error instanceof LimiterUnavailableError
        ? error
        : new LimiterUnavailableError(reasonOf(error), { cause: error })
    if (call.failMode === 'closed') throw unavailable
    clientStats().failedOpen(call.rule.id)
    console.warn(
      JSON.stringify({
        event: 'rate-limit-fail-open',
        rule: call.rule.id,
        reason: unavailable.reason,
        error: String(unavailable.cause ?? unavailable.message),
      })
    )
    return { enforced: false, reason: unavailable.reason }
  }
}

/** Runs `attempt` again once, on a fresh stub, when the runtime says that is safe. */
async function withRetry<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt()
  } catch (error) {
    if (!isRetryable(error)) throw error
    // A broken stub stays broken: `attempt` takes a new one.
    return await attempt()
  }
}

/**
 * The state of a key without charging it (an admin look). Failures throw whatever the fail
 * mode: there is no request to let through.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule id, limit key and policy
 * @param timeoutMs - the longest wait
 * @throws {LimiterUnavailableError} on timeout or error
 */
export async function peek(
  namespace: LimiterNamespace,
  key: KeyRef & Pick<ChargeCall, 'policy'>,
  timeoutMs: number
): Promise<Decision> {
  const name = await objectName(key.rule.id, key.key)
  return withTimeout(
    withRetry(() => counted(key.rule.id, () => namespace.getByName(name).charge(key.policy, 0))),
    timeoutMs
  ).catch(toUnavailable)
}

/**
 * Forgets a key's state.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule id and limit key
 * @param timeoutMs - the longest wait
 * @throws {LimiterUnavailableError} on timeout or error
 */
export async function resetKey(
  namespace: LimiterNamespace,
  key: KeyRef,
  timeoutMs: number
): Promise<void> {
  const name = await objectName(key.rule.id, key.key)
  await withTimeout(
    withRetry(() => counted(key.rule.id, () => namespace.getByName(name).reset())),
    timeoutMs
  ).catch(toUnavailable)
}

/**
 * Frees a concurrency slot. Never throws: a release that fails is covered by the lease expiry.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule and limit key the slot was taken for
 * @param policy - the concurrency limit it was taken under
 * @param leaseId - from the acquiring decision
 * @param timeoutMs - the longest wait
 */
export async function releaseSlot(
  namespace: LimiterNamespace,
  key: KeyRef,
  policy: ConcurrencyPolicy,
  leaseId: string,
  timeoutMs: number
): Promise<void> {
  try {
    const name = await objectName(key.rule.id, key.key)
    await withTimeout(
      counted(key.rule.id, () => namespace.getByName(name).release(policy, leaseId)),
      timeoutMs
    )
  } catch (error) {
    console.warn(
      JSON.stringify({
        event: 'concurrency-release-failed',
        rule: key.rule.id,
        error: String(error),
      })
    )
  }
}

function toUnavailable(error: unknown): never {
  throw error instanceof LimiterUnavailableError
    ? error
    : new LimiterUnavailableError(reasonOf(error), { cause: error })
}

function isRetryable(error: unknown): boolean {
  const flags = error as { retryable?: boolean; overloaded?: boolean } | null
  return flags?.retryable === true && flags.overloaded !== true
}

function reasonOf(error: unknown): UnavailableReason {
  return (error as { overloaded?: boolean } | null)?.overloaded === true ? 'overloaded' : 'error'
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LimiterUnavailableError('timeout')), timeoutMs)
  })
  return Promise.race([promise, timeout]).finally(() => {
    if (timer !== undefined) clearTimeout(timer)
  })
}
