/**
 * @module limiter/lease-calls
 * The calls a lease book makes to its lessor, reserve and refund: an isolate's to its
 * location's object, a location object's to the key's root object. Timed out, counted in the
 * caller's stats like every other call; what a request gets when they fail, and how they are
 * kept running past the request that started them.
 */
import { waitUntil } from 'cloudflare:workers'
import type { LeasablePolicy } from '../../algorithms/reserve'
import type { LimiterUnavailableError } from '../../errors'
import { logEvent } from '../../log'
import type { ChargeCall, ChargeResult } from '../calls/charge-call'
import type { LeaseKey, Lot } from './key-lease'
import { nameOf, stubOf, type ObjectNamespace } from '../calls/object-name'
import { spreadOf } from './lease-sizing'
import type { LeaseAsk, LessorStub, Reservation } from './reservation'
import { delay, unavailableOf, withRetry, withTimeout } from '../calls/rpc'
import type { Region } from '../calls/region'
import type { ClientStats } from '../calls/stats'

/** A key's lessor, as a lease book calls it. */
export interface Upstream {
  /** The longest a call may take (ms). */
  readonly timeoutMs: number
  /**
   * Reserves units. A failure the runtime marks retryable is retried once: units a lost answer
   * granted are only lost, never spent twice.
   *
   * @throws {LimiterUnavailableError} on a timeout or an error
   */
  reserve(lease: LeaseKey, policy: LeasablePolicy, ask: LeaseAsk): Promise<Reservation>
  /**
   * Hands unspent units back. Never throws: a refund that fails leaves the units charged,
   * which only errs on the safe side.
   */
  refund(lease: LeaseKey, policy: LeasablePolicy, lot: Lot): Promise<void>
  /** Has the lessor drop what it holds of a key that was reset. Never throws. */
  forget?(lease: LeaseKey): Promise<void>
}

/** Where a lessee's calls are counted, how long they may take, and who it is. */
export interface CallOptions {
  stats: ClientStats
  timeoutMs: number
  /** The lessee's id, for its lessor's pacing. */
  lessee: string
  /** An isolate's region, told to its location's object (which may lease through it). */
  region?: Region | undefined
}

/** The key alone (a lease book's record of it holds promises and more, which stay here). */
const keyOf = ({ ruleId, key, placement }: LeaseKey): LeaseKey =>
  placement ? { ruleId, key, placement } : { ruleId, key }

/**
 * The namespace's objects as lessors: the limiter's class implements {@link Lessor}
 * (`rate-limiter-object.ts` says so to the compiler), which this code may not import.
 */
const lessors = (namespace: ObjectNamespace) => namespace as ObjectNamespace<LessorStub>

/** The rule of a lease, as object names take it. */
const ruleOf = (lease: LeaseKey) => ({
  id: lease.ruleId,
  ...(lease.placement ? { placement: lease.placement } : {}),
})

/**
 * The name of a key's object in one location: the root's name and the location's code. Key
 * values are percent-encoded, so no root name holds an `@` of its own.
 *
 * @param rootName - the key's object name (`object-name.ts`)
 * @param location - the location's code (`request.cf.colo`)
 */
export function locationName(rootName: string, location: string): string {
  return `${rootName}@${location}`
}

/**
 * The key's root object as a lessor (a location's object calls it).
 *
 * @param namespace - the namespace the key's objects are in
 * @param options - stats, timeout and the caller's id
 */
export function rootUpstream(namespace: ObjectNamespace, options: CallOptions): Upstream {
  const stub = async (lease: LeaseKey) =>
    stubOf(lessors(namespace), ruleOf(lease), await nameOf({ rule: ruleOf(lease), key: lease.key }))
  return {
    timeoutMs: options.timeoutMs,
    reserve: (lease, policy, ask) =>
      timed(options, lease, async (reached) =>
        (await stub(lease)).reserve(policy, { ...onceOnly(ask, reached), lessee: options.lessee })
      ),
    refund: (lease, policy, lot) =>
      quietly(options, lease, async () =>
        (await stub(lease)).refund(policy, lot.units, lot, lot.epoch)
      ),
  }
}

/**
 * The key's object in the isolate's location as a lessor: created near the first isolate that
 * calls it, in the rule's jurisdiction (its location hint names where the root goes, not this).
 *
 * @param namespace - the `LIMITER` binding
 * @param location - where the isolate is (`request.cf.colo`)
 * @param options - stats, timeout and the isolate's id
 */
export function locationUpstream(
  namespace: ObjectNamespace,
  location: string,
  options: CallOptions
): Upstream {
  return tierUpstream(namespace, location, undefined, options)
}

/**
 * The key's object in a region as a lessor (a location's object calls it): created near the
 * region, in the rule's jurisdiction.
 *
 * @param namespace - the namespace the key's objects are in
 * @param region - the region
 * @param options - stats, timeout and the caller's id
 */
export function regionUpstream(
  namespace: ObjectNamespace,
  region: Region,
  options: CallOptions
): Upstream {
  return tierUpstream(namespace, `${REGION_PREFIX}${region}`, region, options)
}

/** What starts the part after `@` of a regional object's name: no location code does. */
export const REGION_PREFIX = 'region:'

function tierUpstream(
  namespace: ObjectNamespace,
  location: string,
  near: Region | undefined,
  options: CallOptions
): Upstream {
  const stub = async (lease: LeaseKey) => {
    const rule = ruleOf(lease)
    const name = locationName(await nameOf({ rule, key: lease.key }), location)
    const jurisdiction = lease.placement?.jurisdiction
    const placement = {
      ...(jurisdiction ? { jurisdiction } : {}),
      ...(near ? { locationHint: near } : {}),
    }
    return stubOf(lessors(namespace), { id: rule.id, placement }, name)
  }
  return {
    timeoutMs: options.timeoutMs,
    reserve: (lease, policy, ask) =>
      timed(options, lease, async (reached) =>
        (await stub(lease)).sublease(keyOf(lease), policy, {
          ...onceOnly(ask, reached),
          lessee: options.lessee,
          budgetMs: options.timeoutMs,
          ...(options.region ? { region: options.region } : {}),
        })
      ),
    refund: (lease, policy, lot) =>
      quietly(options, lease, async () => (await stub(lease)).subrefund(keyOf(lease), policy, lot)),
    forget: (lease) =>
      quietly(options, lease, async () => (await stub(lease)).subforget(keyOf(lease))),
  }
}

/**
 * The first wait before a reservation the lessor refused as overloaded is asked again (ms): a
 * few times what a full queue takes to drain (about a hundred calls of a millisecond). Asked
 * sooner, the call finds the queue still full and is refused again, adding to the load that
 * overflowed it: at a cold start of every location (a deploy), a first wait of 25 ms had 384
 * calls refused at the root in scenario S, 250 ms 173 (`npm run simulate:scale`).
 */
const OVERLOAD_BACKOFF_MS = 250

/**
 * A call within the timeout, retried once when the runtime says it is safe, and after a wait
 * when the lessor answers overloaded (the call was refused before it ran: asking again charges
 * nothing twice). The waits double, each at a point of its own for this lessee, so lessees that
 * all found a cold root busy come back spread out rather than together.
 *
 * `send` is told whether an earlier try may have reached the lessor: any failure but an
 * overloaded refusal (a lost answer, a reset, a timeout) may have come after the lessor applied
 * what the try carried. From then on every try is told so, the tries after an overloaded
 * refusal too, so what an ask hands back is applied at most once.
 */
function timed<T>(
  options: CallOptions,
  lease: LeaseKey,
  send: (reached: boolean) => Promise<T>
): Promise<T> {
  const deadlineMs = Date.now() + options.timeoutMs
  let refused: unknown
  let reached = false
  const once = (again: boolean): Promise<T> =>
    send(again || reached).catch((error: unknown) => {
      if (!isOverloaded(error)) reached = true
      throw error
    })
  const attempt = async (tries: number): Promise<T> => {
    const startMs = Date.now()
    try {
      return await withRetry((again) => counted(options.stats, lease.ruleId, () => once(again)))
    } catch (error) {
      const waitMs =
        OVERLOAD_BACKOFF_MS * 2 ** tries * (0.5 + spreadOf(`${options.lessee}#${tries}`))
      // Asked again only if the wait and another call like this one fit before the deadline:
      // still overloaded is then the answer, not a timeout.
      const nextEndMs = Date.now() + waitMs + (Date.now() - startMs)
      if (!isOverloaded(error) || nextEndMs >= deadlineMs) throw error
      refused = error
      await delay(waitMs)
      return attempt(tries + 1)
    }
  }
  return withTimeout(attempt(0), options.timeoutMs).catch((error: unknown) => {
    // Out of time while asking an overloaded lessor again: it is overloaded, not unreachable.
    const failure = unavailableOf(error)
    throw refused !== undefined && failure.reason === 'timeout' ? unavailableOf(refused) : failure
  })
}

function isOverloaded(error: unknown): boolean {
  return (error as { overloaded?: unknown } | null)?.overloaded === true
}

/** A call whose failure is only logged. */
async function quietly(
  options: CallOptions,
  lease: LeaseKey,
  send: () => Promise<unknown>
): Promise<void> {
  try {
    await withTimeout(counted(options.stats, lease.ruleId, send), options.timeoutMs)
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

/**
 * An ask as sent again after a try that may have reached the lessor: without the units it
 * handed back or reported spent, which must not count twice there (lost, they are only
 * under-admission).
 */
function onceOnly(ask: LeaseAsk, reached: boolean): LeaseAsk {
  if (!reached || (!ask.returned && !ask.spent)) return ask
  const bare = { ...ask }
  delete bare.returned
  delete bare.spent
  return bare
}

function counted<T>(stats: ClientStats, ruleId: string, send: () => Promise<T>): Promise<T> {
  const done = stats.call(ruleId, Date.now())
  return send().finally(() => done(Date.now()))
}
