/**
 * @module limiter/lease-refill
 * How a lease book (`leases.ts`) refills a key from its lessor: the ask sized by the key's
 * refill plan (and what it hands back and reports spent with it), the answer's units added to
 * what is held and its pacing kept, and the refill started ahead of need in the background.
 */
import { addLot, heldNow, lotsOf, measureRate, takeUnits } from './key-lease'
import type { Held, KeyLease, Outcome, Pending } from './key-lease'
import type { HandBack } from './hand-back'
import type { Upstream } from './lease-calls'
import { offsetOf, rootTimeOf } from './lease-clock'
import { askUnits, planStableUntilMs, refillPlan, type RefillPlan } from './lease-sizing'
import type { LeaseTable } from './lease-table'
import { demandRate, lesseeState, paceByAnswer, type Pacing } from './lessor-word'
import type { Reservation } from './reservation'
import { delay, unavailableOf } from '../calls/rpc'

/** A book's record of a key: what it holds, and the lessor it holds it from. */
export interface BookLease extends KeyLease {
  to: Upstream
  /** The last refill plan, while it holds (see `planStableUntilMs`). */
  plan?: RefillPlan | undefined
  planUntilMs?: number | undefined
  /** What the takers waiting for a reservation want beyond their need. */
  waitingExtra: number
}

/** What a book's parts share: its clock, its keys, its hand-backs and its pacing. */
export interface BookParts {
  /** The book's clock (ms). */
  now: () => number
  /** The book's keys. */
  leases: LeaseTable<BookLease, Upstream>
  /** Where units going back and background calls run. */
  handBack: HandBack
  /** Where in a horizon the book asks on its own, and how long a scarce key stays so. */
  pacing: Pacing
}

/** A book's refills: its asks of a key's lessor, and what it makes of the answers. */
export class LeaseRefill {
  readonly #now: () => number
  readonly #leases: LeaseTable<BookLease, Upstream>
  readonly #handBack: HandBack
  readonly #pacing: Pacing
  readonly #starting: (nowMs: number) => boolean

  /**
   * @param parts - the book's clock, keys, hand-backs and pacing
   * @param starting - whether the book's asks say it is just starting
   */
  constructor(parts: BookParts, starting: (nowMs: number) => boolean) {
    this.#now = parts.now
    this.#leases = parts.leases
    this.#handBack = parts.handBack
    this.#pacing = parts.pacing
    this.#starting = starting
  }

  /**
   * Starts a reservation for `demand` units that waiting requests spend at once, of which
   * `need` at least (0: any), plus what tops the units held up to a batch; and, near a
   * window's end, the next window's batch.
   *
   * @param lease - the key's lease
   * @param nowMs - the time
   * @param demand - units waiting requests spend at once
   * @param need - the least of use, or 0
   * @param sendAtMs - the ask is sent no sooner (the takes that come meanwhile join it)
   */
  reserve(lease: BookLease, nowMs: number, demand: number, need: number, sendAtMs = 0): Pending {
    measureRate(lease, nowMs, need)
    let promise: Promise<Outcome>
    if (sendAtMs > nowMs) {
      // Made when sent: the takers waiting then (this one among them) want their share of it.
      promise = delay(sendAtMs - nowMs).then(() => {
        // The requests that came meanwhile are the demand this ask is sized by.
        measureRate(lease, this.#now())
        const waited = lease.waiting + lease.waitingExtra - this.held(lease, this.#now()).now
        return this.#ask(lease, Math.max(demand, waited), need)
      })
    } else promise = this.#ask(lease, demand, need)
    const pending: Pending = { promise, sinceMs: nowMs, minUnits: need }
    lease.pending = pending
    void promise.then(() => {
      if (lease.pending === pending) lease.pending = undefined
    })
    return pending
  }

  /** Asks the lessor for `demand` units that waiting requests spend at once (`need` at least). */
  #ask(lease: BookLease, demand: number, need: number): Promise<Outcome> {
    const nowMs = this.#now()
    lease.plan = undefined
    const { policy } = lease
    const plan = this.#planOf(lease, nowMs)
    const held = this.held(lease, nowMs)
    const { units, nextUnits } = askUnits(
      plan,
      { ...held, now: held.now - held.ending },
      demand,
      lease.shortWaitMs !== undefined || nowMs < lease.scarceUntilMs,
      nowMs >= lease.aheadRefusedUntilMs
    )
    const returned = lease.lapsed
    lease.lapsed = undefined
    const spent = lease.spent
    lease.spent = undefined
    this.#handBack.sentWithAsk(lease)
    // Its lessor sizes and paces this book by it.
    const ratePerMs = demandRate(lease)
    const ask = {
      units,
      minUnits: need,
      ...(ratePerMs !== undefined ? { ratePerMs } : {}),
      nextUnits,
      nextWindowMs: plan.nextWindowMs,
      ...(returned ? { returned } : {}),
      ...(spent ? { spent } : {}),
      ...(this.#starting(nowMs) ? { starting: true as const } : {}),
    }
    return lease.to.reserve(lease, policy, ask).then(
      (reservation): Outcome => {
        // Asked for the next window and given none (its lessor keeps the room for this one):
        // no more asks ahead until that window begins.
        if (nextUnits > 0 && !reservation.next && !reservation.ramp)
          lease.aheadRefusedUntilMs =
            (plan.nextWindowMs ?? 0) - (rootTimeOf(lease.clock, nowMs) - nowMs)
        this.#apply(lease, reservation, nowMs)
        return { ok: true, reservation }
      },
      (error: unknown): Outcome => ({ ok: false, error: unavailableOf(error) })
    )
  }

  /** Adds granted units to the lots, and keeps the lessor's answer and pacing. */
  #apply(lease: BookLease, reservation: Reservation, sentAtMs: number): void {
    const nowMs = this.#now()
    lease.plan = undefined
    lease.snapshot = reservation.decision
    lease.horizonMs = reservation.horizonMs
    lease.roundTripMs = Math.max(0, nowMs - sentAtMs)
    lease.shortWaitMs = undefined
    const { chargedAtMs } = reservation
    const rootNowMs = reservation.rootNowMs ?? [chargedAtMs, chargedAtMs]
    lease.clock = offsetOf(rootNowMs, sentAtMs, nowMs) ?? lease.clock
    for (const lot of lotsOf(reservation)) addLot(lease, lot, nowMs)
    // A lease dropped meanwhile (a reset, a quiet sweep, eviction) takes nothing more.
    if (this.#leases.get(lease) !== lease) this.#handBack.all(lease, nowMs)
    paceByAnswer(lease, reservation, nowMs, this.#pacing)
  }

  /**
   * Reserves the next batch in the background once the units run low (or the next window's
   * are due and missing). A key too slow to spend one unit over the horizon (batch 0)
   * reserves only on demand; a key its lessor called scarce waits out the horizon.
   *
   * @param lease - the key's lease
   * @param nowMs - the time
   * @param held - what it holds, after the take that prompts this
   */
  refillAhead(lease: BookLease, nowMs: number, held: Held): void {
    // Not before a demand is known: measured here, or reported by this book's lessees (a
    // location's object, whose isolates may ask ahead before it measured a rate of its own).
    if (lease.pending || (lease.rate === undefined && lease.reportedRate === undefined)) return
    const { policy } = lease
    const plan = this.#planOf(lease, nowMs)
    // Too much held (demand fell, or was overestimated): the excess goes back now, where
    // other lessees can spend it. Not while starting: its demand is not measured yet, and its
    // lessor granted it more than it asked for its lessees' first stocks.
    const excess = held.now - plan.keepAtMost
    if (excess > 0 && plan.batch > 0 && !this.#starting(nowMs)) {
      const lot = takeUnits(lease, excess, nowMs)
      this.#handBack.run(lease.to.refund(lease, policy, lot))
      return
    }
    if (plan.batch + plan.nextBatch === 0 || nowMs < lease.quietUntilMs) return
    // Units held for later in this window (a short key's, its ramp's) come in without an ask.
    // Units whose lease ends before the next ask would come are not held for it.
    const low = held.now - held.ending + held.soon < plan.refillBelow
    const aheadMissing =
      plan.aheadDue && nowMs >= lease.aheadRefusedUntilMs && held.later < plan.nextBatch / 2
    if (!low && !aheadMissing) return
    this.#handBack.run(this.reserve(lease, nowMs, 0, 0).promise)
  }

  /** The key's refill plan: the last one while it holds, else a new one. */
  #planOf(lease: BookLease, nowMs: number): RefillPlan {
    if (lease.plan && nowMs < lease.planUntilMs!) return lease.plan
    const lessee = lesseeState(lease, this.#pacing, this.#now())
    // Planned by the root's time, whose windows the units are charged in (its `nextWindowMs`
    // too, which the ask carries): the plan's ends, by this clock.
    const rootMs = rootTimeOf(lease.clock, nowMs)
    const plan = refillPlan(lease.policy, lessee, rootMs)
    // A scarce key's plan changes when its scarcity ends.
    const scarceEndMs = nowMs < lease.scarceUntilMs ? lease.scarceUntilMs : Infinity
    lease.plan = plan
    lease.planUntilMs = Math.min(planStableUntilMs(lessee, plan) - (rootMs - nowMs), scarceEndMs)
    return plan
  }

  /**
   * What a key holds now and for later; what lapsed unspent goes back.
   *
   * @param lease - the key's lease
   * @param nowMs - the time
   */
  held(lease: BookLease, nowMs: number): Held {
    const held = heldNow(lease, nowMs, lease.horizonMs)
    if (lease.lapsed) this.#handBack.lapsed(lease)
    return held
  }
}
