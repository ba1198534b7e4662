/**
 * @module limiter/client
 * The only way into the Durable Objects: naming, timeouts, retries, errors and the fail
 * policy all live here, so caching and hot-key leasing can be added in one place later.
 */
import type { ConcurrencyPolicy, Policy } from '../algorithms'
import { LimiterUnavailableError, type UnavailableReason } from '../errors'
import type { Decision, FailMode } from '../types'
import { objectName } from './object-name'
import type { RateLimiterObject } from './rate-limiter-object'

/** The Durable Object namespace the limiter counts in. */
export type LimiterNamespace = DurableObjectNamespace<RateLimiterObject>

/** One key to charge. */
export interface LimitCall {
  /** The rule the key belongs to (for naming and logs). */
  ruleId: string
  /** The limit key (`rules/key.ts`). */
  key: string
  /** The limit to apply. */
  policy: Policy
  /** Units to take. */
  cost: number
  /** What happens when no decision can be had. */
  failMode: FailMode
}

/** A decision, or the record that none could be had and the request was let through. */
export type LimitResult =
  { enforced: true; decision: Decision } | { enforced: false; reason: UnavailableReason }

/**
 * Charges one key in its Durable Object, within `timeoutMs`.
 *
 * A failure is retried once on a fresh stub when the runtime marks it retryable and not an
 * overload; a charge is not idempotent, so a retry may count twice, which errs on the safe side.
 * If it still fails, `failMode: 'open'` resolves `{ enforced: false }` (and logs), `'closed'`
 * throws. A call that timed out is not cancelled and may still be counted when it lands.
 *
 * @param namespace - the `LIMITER` binding
 * @param call - the key, policy, cost and fail mode
 * @param timeoutMs - the longest wait for a decision
 * @throws {LimiterUnavailableError} when the key fails closed
 */
export async function limit(
  namespace: LimiterNamespace,
  call: LimitCall,
  timeoutMs: number
): Promise<LimitResult> {
  return limitWith(call, timeoutMs, (name) => consumeWithRetry(namespace, name, call))
}

/** Asks the key's object through `ask`, within `timeoutMs`, applying the call's fail mode. */
async function limitWith<D extends Decision>(
  call: LimitCall,
  timeoutMs: number,
  ask: (name: string) => Promise<D>
): Promise<{ enforced: true; decision: D } | { enforced: false; reason: UnavailableReason }> {
  try {
    const name = await objectName(call.ruleId, call.key)
    const decision = await withTimeout(ask(name), timeoutMs)
    return { enforced: true, decision }
  } catch (error) {
    const unavailable =
      error instanceof LimiterUnavailableError
        ? error
        : new LimiterUnavailableError(reasonOf(error), { cause: error })
    if (call.failMode === 'closed') throw unavailable
    console.warn(
      JSON.stringify({
        event: 'rate-limit-fail-open',
        rule: call.ruleId,
        reason: unavailable.reason,
        error: String(unavailable.cause ?? unavailable.message),
      })
    )
    return { enforced: false, reason: unavailable.reason }
  }
}

async function consumeWithRetry(
  namespace: LimiterNamespace,
  name: string,
  call: LimitCall
): Promise<Decision> {
  return withRetry(() => namespace.getByName(name).consume(call.policy, call.cost))
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
  key: Pick<LimitCall, 'ruleId' | 'key' | 'policy'>,
  timeoutMs: number
): Promise<Decision> {
  const name = await objectName(key.ruleId, key.key)
  return withTimeout(
    withRetry(() => namespace.getByName(name).consume(key.policy, 0)),
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
  key: Pick<LimitCall, 'ruleId' | 'key'>,
  timeoutMs: number
): Promise<void> {
  const name = await objectName(key.ruleId, key.key)
  await withTimeout(
    withRetry(() => namespace.getByName(name).reset()),
    timeoutMs
  ).catch(toUnavailable)
}

/**
 * Takes a concurrency slot for a request, waiting in the key's queue if need be. The answer
 * may take up to the policy's `maxWaitMs`, on top of `timeoutMs`. Failures follow `failMode`
 * like {@link limit}.
 *
 * @param namespace - the `LIMITER` binding
 * @param call - the key, concurrency policy and fail mode
 * @param timeoutMs - the longest wait for the object beyond the queue wait
 * @returns the decision; `timedOut` when the queue wait ran out
 */
export async function acquireSlot(
  namespace: LimiterNamespace,
  call: LimitCall & { policy: ConcurrencyPolicy },
  timeoutMs: number
) {
  // Not retried: a queued acquire that reached the object may already hold a slot.
  return limitWith(call, timeoutMs + call.policy.maxWaitMs, (name) =>
    namespace.getByName(name).acquire(call.policy)
  )
}

/**
 * Frees a concurrency slot. Never throws: a release that fails is covered by the lease expiry.
 *
 * @param namespace - the `LIMITER` binding
 * @param call - the key and concurrency policy
 * @param leaseId - from the acquiring decision
 * @param timeoutMs - the longest wait
 */
export async function releaseSlot(
  namespace: LimiterNamespace,
  call: Pick<LimitCall, 'ruleId' | 'key'> & { policy: ConcurrencyPolicy },
  leaseId: string,
  timeoutMs: number
): Promise<void> {
  try {
    const name = await objectName(call.ruleId, call.key)
    await withTimeout(namespace.getByName(name).release(call.policy, leaseId), timeoutMs)
  } catch (error) {
    console.warn(
      JSON.stringify({
        event: 'concurrency-release-failed',
        rule: call.ruleId,
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
