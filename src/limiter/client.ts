/**
 * @module limiter/client
 * The only way into the Durable Objects: naming, placement, timeouts, retries, errors and the
 * fail policy all live here, with what an isolate keeps between requests (`isolate.ts`): the
 * denials it repeats itself (`block-cache.ts`) and the coalescing of concurrent requests for
 * one key into one call (`coalesce.ts`).
 */
import type { ConcurrencyPolicy } from '../algorithms'
import { LimiterUnavailableError } from '../errors'
import type { Decision } from '../types'
import type { ChargeCall, ChargeResult, KeyRef } from './calls/charge-call'
import type { LimiterNamespace } from './limiter-namespace'
import { failedCharge } from './leased/lease-calls'
import { isolateLeases } from './leased/leases'
import { limiterIsolate, type Answer, type LimiterIsolate } from './isolate'
import { identity, nameOf, stubOf } from './calls/object-name'
import type { BatchItem } from './rate-limiter-object'
import { MAX_LINGER_MS } from './exact/coalesce'
import { toUnavailable, unavailableOf, withRetry, withTimeout } from './calls/rpc'
import { regionOf, type PlaceFacts } from './calls/region'
import { logEvent } from '../log'

export type { ChargeCall, ChargeResult, KeyRef } from './calls/charge-call'
export type { LimiterNamespace } from './limiter-namespace'

/**
 * Charges one key, within `timeoutMs`: a leased key's local decision as it is, every other in
 * a promise. A key whose object denied a request of this cost or less
 * under this policy is answered here until the object's retry time (`local`, no call). Other
 * requests go to the key's object; while a call for the key is in flight, they queue and go
 * together, as one call, when it returns. A concurrency limit takes a slot, alone (never
 * coalesced or cached), waiting in the key's queue up to the policy's `maxWaitMs` on top of
 * `timeoutMs`; its decision says `timedOut` when that wait ran out.
 *
 * A failure is retried once on a fresh stub when the runtime marks it retryable and not an
 * overload; a charge is not idempotent, so a retry may count twice, which errs on the safe side.
 * A slot is never retried: a queued acquire that reached the object may already hold one. If
 * it still fails, `failMode: 'open'` resolves `{ enforced: false }` (and logs), `'closed'`
 * throws; a batch that fails fails each of its requests by its own fail mode. A call that timed
 * out is not cancelled and may still be counted when it lands; a request that timed out while
 * queued is not sent.
 *
 * @param namespace - the `LIMITER` binding
 * @param call - the key, policy, cost and fail mode
 * @param timeoutMs - the longest wait for a decision
 * @param isolate - the isolate's client state (tests pass their own)
 * @throws {LimiterUnavailableError} when the key fails closed
 */
export function charge(
  namespace: LimiterNamespace,
  call: ChargeCall,
  timeoutMs: number,
  isolate: LimiterIsolate = limiterIsolate()
): ChargeResult | Promise<ChargeResult> {
  if (call.consistency === 'leased') return isolateLeases().charge(namespace, call, timeoutMs)
  return chargeObject(namespace, call, timeoutMs, isolate)
}

/** {@link charge} for a key its object decides. */
async function chargeObject(
  namespace: LimiterNamespace,
  call: ChargeCall,
  timeoutMs: number,
  isolate: LimiterIsolate
): Promise<ChargeResult> {
  const { policy, cost, rule } = call
  if (call.deferred)
    return chargeWith(isolate, call, timeoutMs, async () => {
      const name = await nameOf(call)
      const sentAtMs = Date.now()
      const decision = await withRetry(() =>
        counted(isolate, rule.id, () => stubOf(namespace, rule, name).gate(policy, cost))
      )
      isolate.blocks.note(identity(rule, name), policy, cost, decision, sentAtMs)
      return { decision, local: false }
    })
  if (policy.algorithm === 'concurrency')
    return chargeWith(isolate, call, timeoutMs + policy.maxWaitMs, async () => {
      const name = await nameOf(call)
      const decision = await counted(isolate, rule.id, () =>
        stubOf(namespace, rule, name).acquire(policy)
      )
      return { decision, local: false }
    })
  // Timed per call and per queued request below, not per request: a timer is not free.
  return chargeWith(isolate, call, undefined, async () => {
    const name = await nameOf(call)
    const key = identity(rule, name)
    const deadlineMs = Date.now() + timeoutMs
    const settle = (): Answer | undefined => {
      if (Date.now() >= deadlineMs) throw new LimiterUnavailableError('timeout')
      const decision = isolate.blocks.answer(key, policy, cost, Date.now())
      return decision && { decision, local: true }
    }
    const known = settle()
    if (known) return known
    const joins = isolate.lanes.joins(key)
    // A batch waits for the call ahead at most MAX_LINGER_MS: one hop to a far object, not two.
    const linger = Math.min(timeoutMs / 2, MAX_LINGER_MS)
    const answer = isolate.lanes.run(key, { policy, cost }, send, settle, linger)
    // A request that opens a batch waits on its own call, timed in `send`. One that joins
    // another's batch needs a timer of its own: workerd cancels a request whose only pending
    // work is another request's I/O ("the script will never generate a response", a 500).
    return joins ? withTimeout(answer, deadlineMs - Date.now()) : answer
    async function send(items: BatchItem[]): Promise<Answer[]> {
      const sentAtMs = Date.now()
      const decisions = await withTimeout(
        withRetry(() =>
          counted(isolate, rule.id, async (): Promise<Decision[]> => {
            const stub = stubOf(namespace, rule, name)
            if (items.length > 1) return await stub.chargeBatch(items)
            const [only] = items as [BatchItem]
            return [await stub.charge(only.policy, only.cost)]
          })
        ),
        deadlineMs - sentAtMs
      )
      return items.map((item, i) => {
        const decision = decisions[i]!
        isolate.blocks.note(key, item.policy, item.cost, decision, sentAtMs)
        return { decision, local: false }
      })
    }
  })
}

/**
 * Notes where this isolate runs, from a request's `cf.colo` (an isolate never moves), and its
 * region (`region.ts`): leased quotas ask the key's object in the isolate's location, which may
 * lease through the key's object in that region. Read only until known: workerd builds
 * `request.cf` anew on every read (about 0.1 ms of a hot key's request in the bench's profile).
 *
 * @param request - the incoming request (its `cf`, if it has one)
 */
export function locateIsolate(request: { readonly cf?: unknown }): void {
  const book = isolateLeases()
  if (book.located) return
  const cf = request.cf as (PlaceFacts & { colo?: unknown }) | undefined
  const colo = cf?.colo
  if (typeof colo === 'string' && colo !== '') book.locate(colo, regionOf(cf))
}

/**
 * The decision this isolate holds for a call without asking its object: a denial it repeats
 * (see {@link charge}), counted as a local decision. `undefined` when the object must decide.
 *
 * @param call - the key, policy and cost
 * @param isolate - the isolate's client state
 */
export function decidedLocally(
  call: ChargeCall,
  isolate: LimiterIsolate = limiterIsolate()
): Decision | undefined | Promise<Decision | undefined> {
  // Most requests: nothing is blocked here, and the key's name need not be worked out.
  if (call.policy.algorithm === 'concurrency' || isolate.blocks.size === 0) return undefined
  const name = nameOf(call)
  // A short key names its object as it is: answered without a promise, as most are.
  if (typeof name !== 'string') return name.then((digested) => answerHere(call, digested, isolate))
  return answerHere(call, name, isolate)
}

function answerHere(call: ChargeCall, name: string, isolate: LimiterIsolate): Decision | undefined {
  const decision = isolate.blocks.answer(
    identity(call.rule, name),
    call.policy,
    call.cost,
    Date.now()
  )
  if (decision) isolate.stats.decided(call.rule.id, 'local')
  return decision
}

/** Makes one call to a limiter object, counted in the isolate's stats. */
function counted<T>(isolate: LimiterIsolate, ruleId: string, send: () => Promise<T>): Promise<T> {
  // Date.now() moves across I/O even where it is frozen during execution: enough for latency.
  const done = isolate.stats.call(ruleId, Date.now())
  return send().finally(() => done(Date.now()))
}

/**
 * Asks for a decision through `ask`, within `timeoutMs` (`undefined`: `ask` keeps its own
 * deadline), applying the call's fail mode.
 */
async function chargeWith(
  isolate: LimiterIsolate,
  call: ChargeCall,
  timeoutMs: number | undefined,
  ask: () => Promise<Answer>
): Promise<ChargeResult> {
  try {
    const asked = ask()
    const { decision, local } = await (timeoutMs === undefined
      ? asked
      : withTimeout(asked, timeoutMs))
    isolate.stats.decided(call.rule.id, local ? 'local' : 'durableObject')
    return local ? { enforced: true, decision, local } : { enforced: true, decision }
  } catch (error) {
    return failedCharge(isolate.stats, call, unavailableOf(error))
  }
}

/**
 * The state of a key without charging it (an admin look). Failures throw whatever the fail
 * mode: there is no request to let through.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule id, limit key and policy
 * @param timeoutMs - the longest wait
 * @param isolate - the isolate's client state
 * @throws {LimiterUnavailableError} on timeout or error
 */
export async function peek(
  namespace: LimiterNamespace,
  key: KeyRef & Pick<ChargeCall, 'policy'>,
  timeoutMs: number,
  isolate: LimiterIsolate = limiterIsolate()
): Promise<Decision> {
  const name = await nameOf(key)
  return withTimeout(
    withRetry(() =>
      counted(isolate, key.rule.id, () => stubOf(namespace, key.rule, name).charge(key.policy, 0))
    ),
    timeoutMs
  ).catch(toUnavailable)
}

/**
 * Forgets a key's state, here at once (its repeated denial is dropped) and in its object.
 * Other isolates repeat a denial they hold for at most `MAX_BLOCK_AGE_MS` more.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule id and limit key
 * @param timeoutMs - the longest wait
 * @param isolate - the isolate's client state
 * @throws {LimiterUnavailableError} on timeout or error
 */
export async function resetKey(
  namespace: LimiterNamespace,
  key: KeyRef,
  timeoutMs: number,
  isolate: LimiterIsolate = limiterIsolate()
): Promise<void> {
  const name = await nameOf(key)
  isolate.blocks.drop(identity(key.rule, name))
  await withTimeout(
    withRetry(() => counted(isolate, key.rule.id, () => stubOf(namespace, key.rule, name).reset())),
    timeoutMs
  ).catch(toUnavailable)
}

/**
 * Drops what this isolate and its location's object hold of a leased key an admin reset (both
 * were charged in the state the reset wiped). Never throws.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule and limit key
 * @param timeoutMs - the longest wait
 */
export async function forgetLeases(
  namespace: LimiterNamespace,
  key: KeyRef,
  timeoutMs: number
): Promise<void> {
  const placement = key.rule.placement
  await isolateLeases().forgetHere(
    namespace,
    { ruleId: key.rule.id, ...(placement ? { placement } : {}), key: key.key },
    timeoutMs
  )
}

/**
 * Frees a concurrency slot. Never throws: a release that fails is covered by the lease expiry.
 *
 * @param namespace - the `LIMITER` binding
 * @param key - the rule and limit key the slot was taken for
 * @param policy - the concurrency limit it was taken under
 * @param leaseId - from the acquiring decision
 * @param timeoutMs - the longest wait
 * @param isolate - the isolate's client state
 */
export async function releaseSlot(
  namespace: LimiterNamespace,
  key: KeyRef,
  policy: ConcurrencyPolicy,
  leaseId: string,
  timeoutMs: number,
  isolate: LimiterIsolate = limiterIsolate()
): Promise<void> {
  try {
    const name = await nameOf(key)
    await withTimeout(
      counted(isolate, key.rule.id, () =>
        stubOf(namespace, key.rule, name).release(policy, leaseId)
      ),
      timeoutMs
    )
  } catch (error) {
    logEvent('warn', 'concurrency-release-failed', { rule: key.rule.id, error: String(error) })
  }
}
