/**
 * @module test/support/flaky-limiter-object
 * A Durable Object with the limiter's RPC shape that fails the way real objects can. The start
 * of its name (the rule id) picks how:
 *
 * - `throws`: throws a plain error on every call;
 * - `retryable`: throws an error the runtime would mark retryable, on every call;
 * - `flaky-once`: the first call throws a retryable error, later ones decide;
 * - `counts-then-fails`: counts the request, then throws a retryable error (a reply lost after
 *   the write);
 * - `overloaded`: throws an overload error (marked retryable too, as the runtime does);
 * - `refused-once`, `lost-then-overloaded` (`reserve` only): the first call is refused as
 *   overloaded; or its answer is lost after it ran, and the next is refused as overloaded;
 * - `hangs`: never answers;
 * - `slow`: answers, counting, only once `proceed()` is called (a decision that lands late);
 * - anything else: decides like the real object.
 *
 * Every `charge` or `chargeBatch` call is recorded, so tests can tell a retry from a single call.
 * `reserve` (a leased quota's call to the root) throws or hangs the same way, and otherwise
 * grants like the real object. As a key's object in one location (`sublease`, named
 * `<root>@<location>`), a root name starting `loc-<fault>` picks how the location fails (see
 * `sublease`), and as a key's regional object (`<root>@region:<hint>`) one starting
 * `reg-<fault>`; otherwise it works as the real one, its root being an object of this class.
 */
import { DurableObject } from 'cloudflare:workers'
import { chargeKey, type KeyState, type Policy } from '../../src/algorithms'
import { reserveKey, type LeasablePolicy } from '../../src/algorithms/reserve'
import type { ObjectNamespace } from '../../src/limiter/calls/object-name'
import type { LeaseKey } from '../../src/limiter/leased/key-lease'
import { REGION_PREFIX } from '../../src/limiter/leased/lease-calls'
import { LocationLessor } from '../../src/limiter/leased/location-lessor'
import type { LesseeAsk, Reservation } from '../../src/limiter/leased/reservation'
import type { Decision } from '../../src/types'

/** An error as the runtime flags it. */
const flagged = (
  message: string,
  flags: { retryable?: boolean; overloaded?: boolean; durableObjectReset?: boolean }
) => Object.assign(new Error(message), flags)

export class FlakyLimiterObject extends DurableObject {
  #proceed: (() => void) | undefined
  #lessor: LocationLessor | undefined

  /** A batch fails, hangs or decides as one call does; `calls()` counts it once. */
  async chargeBatch(items: { policy: Policy; cost: number }[]): Promise<Decision[]> {
    const decisions: Decision[] = []
    await this.#fail(() => {
      for (const { policy, cost } of items) decisions.push(this.#decide(policy, cost))
    })
    return decisions
  }

  async charge(policy: Policy, cost: number): Promise<Decision> {
    let decision: Decision | undefined
    await this.#fail(() => (decision = this.#decide(policy, cost)))
    return decision!
  }

  /** One call: counted, then failing as the object's name says, or deciding through `decide`. */
  async #fail(decide: () => void): Promise<void> {
    const name = this.ctx.id.name ?? ''
    const calls = this.calls() + 1
    this.ctx.storage.kv.put('calls', calls)
    if (name.startsWith('hangs')) await new Promise(() => {})
    if (name.startsWith('slow')) await new Promise<void>((resolve) => (this.#proceed = resolve))
    if (name.startsWith('throws')) throw new Error(`flaky limiter ${name} failed`)
    if (name.startsWith('retryable') || (name.startsWith('flaky-once') && calls === 1))
      throw flagged(`flaky limiter ${name}: retry`, { retryable: true })
    if (name.startsWith('overloaded'))
      throw flagged(`flaky limiter ${name}: overloaded`, { retryable: true, overloaded: true })
    decide()
    if (name.startsWith('counts-then-fails'))
      throw flagged(`flaky limiter ${name}: reply lost`, { retryable: true })
  }

  async reserve(policy: LeasablePolicy, ask: LesseeAsk): Promise<Reservation> {
    const name = this.ctx.id.name ?? ''
    const calls = this.#count('reserve-calls')
    const reports = this.ctx.storage.kv.get<number[]>('reports') ?? []
    this.ctx.storage.kv.put('reports', [
      ...reports,
      (ask.spent?.length ?? 0) + (ask.returned?.length ?? 0),
    ])
    if (name.startsWith('flaky-once') && calls === 1)
      throw flagged(`flaky limiter ${name}: retry`, { retryable: true })
    // An answer lost after what the ask carried was applied, then a refusal before running.
    if (name.startsWith('lost-then-overloaded') && calls <= 2)
      throw calls === 1
        ? flagged(`flaky limiter ${name}: reply lost`, { retryable: true })
        : flagged(`flaky limiter ${name}: overloaded`, { retryable: true, overloaded: true })
    if (name.startsWith('refused-once') && calls === 1)
      throw flagged(`flaky limiter ${name}: overloaded`, { retryable: true, overloaded: true })
    if (name.startsWith('hangs')) await new Promise(() => {})
    if (name.startsWith('throws')) throw new Error(`flaky limiter ${name} failed`)
    if (name.startsWith('overloaded'))
      throw flagged(`flaky limiter ${name}: overloaded`, { retryable: true, overloaded: true })
    const nowMs = Date.now()
    const reserved = reserveKey(this.#read(), policy, nowMs, ask)
    if (reserved.state !== undefined) this.ctx.storage.kv.put('state', reserved.state)
    const { granted, decision, validUntilMs, next, scarce } = reserved
    return {
      granted,
      decision,
      chargedAtMs: nowMs,
      validUntilMs,
      epoch: 'flaky',
      ...(next ? { next: { ...next, epoch: 'flaky' } } : {}),
      horizonMs: 250,
      scarce,
    }
  }

  refund(): void {}

  /**
   * A key's object in one location. A root named `loc-<fault>…` makes its location objects fail
   * (`loc-throws`, `loc-overloaded`, `loc-hangs`; `loc-restarts`: the first call is lost to a
   * reset, as a deploy resets objects); any other serves, its root being an object of this
   * class, which fails as its own name says.
   */
  async sublease(lease: LeaseKey, policy: LeasablePolicy, ask: LesseeAsk): Promise<Reservation> {
    const name = this.ctx.id.name ?? ''
    const calls = this.#count('sublease-calls')
    // A regional object (`<root>@region:<hint>`) of a root named `reg-<fault>` fails as it says.
    const tier = name.includes(`@${REGION_PREFIX}`) ? 'reg' : 'loc'
    if (name.startsWith(`${tier}-hangs`)) await new Promise(() => {})
    if (name.startsWith(`${tier}-throws`)) throw new Error(`flaky ${tier} ${name} failed`)
    if (name.startsWith(`${tier}-overloaded`))
      throw flagged(`flaky ${tier} ${name}: overloaded`, { retryable: true, overloaded: true })
    if (name.startsWith(`${tier}-restarts`) && calls === 1)
      throw flagged('Durable Object reset because its code was updated.', {
        retryable: true,
        durableObjectReset: true,
      })
    this.#lessor ??= new LocationLessor(name)
    const root = (this.env as { FLAKY_LIMITER: unknown }).FLAKY_LIMITER as ObjectNamespace
    return this.#lessor.serve(root, lease, policy, ask)
  }

  subrefund(): void {}

  /** For each `reserve` that reached it, how many lots it handed back or reported spent. */
  reports(): number[] {
    return this.ctx.storage.kv.get<number[]>('reports') ?? []
  }

  /** How many times a leased quota's call (`reserve-calls`, `sublease-calls`) reached it. */
  leaseCalls(kind: 'reserve-calls' | 'sublease-calls'): number {
    return this.ctx.storage.kv.get<number>(kind) ?? 0
  }

  #count(kind: 'reserve-calls' | 'sublease-calls'): number {
    const calls = this.leaseCalls(kind) + 1
    this.ctx.storage.kv.put(kind, calls)
    return calls
  }

  /** Lets a `slow` object's pending call decide. */
  proceed(): void {
    this.#proceed?.()
  }

  /** How many times `charge` was called. */
  calls(): number {
    return this.ctx.storage.kv.get<number>('calls') ?? 0
  }

  /** What `policy` still admits, without charging. */
  remaining(policy: Policy): number {
    return chargeKey(this.#read(), policy, Date.now(), 0).decision.remaining
  }

  #decide(policy: Policy, cost: number): Decision {
    const { state, decision } = chargeKey(this.#read(), policy, Date.now(), cost)
    if (state !== undefined) this.ctx.storage.kv.put('state', state)
    return decision
  }

  #read(): KeyState | undefined {
    return this.ctx.storage.kv.get<KeyState>('state')
  }
}
