/**
 * @module limiter/lease-clock
 * A lessee's clock against its key's root's. Units keep the span the root charged them for, in
 * the root's time, through every tier; no two machines' clocks agree, so a lessee learns how
 * far its own is from the root's from each answer: the lessor tells what the root's clock read
 * when it answered (the root its own; a location's or regional object its own estimate, as
 * earliest and latest), and the answer came between the ask's sending and its arrival here. So
 * the root's clock minus this one lies within
 *
 *     [rootEarliest − arrivedAtMs − 1, rootLatest − sentAtMs + 1]
 *
 * whatever either clock's error, and however long each way took (clocks read whole ms: a
 * reading stands for any time within its ms). A unit is spent here only while its span holds
 * for every offset in those bounds: from `validFromMs − low` until `validUntilMs − high` by
 * this clock (a unit granted now is spendable at once: its answer came after its charge). The
 * cost is the bounds' width, a round trip to the root through the tiers, at each end of a span
 * that starts or ends in the future. Pure.
 */
import { windowOf, type LeasablePolicy } from '../../algorithms/reserve'

/** How far a lessee's clock is from the root's: the root's minus its own lies within these (ms). */
export interface ClockOffset {
  lowMs: number
  highMs: number
}

/**
 * How fast two clocks may drift apart between two answers (a fraction: 200 ppm). Disciplined
 * clocks drift a few ppm; a lessee's spans are narrowed by this much of their length.
 */
const DRIFT = 2e-4

/**
 * The offset an answer bounds, or `undefined` when it says nothing of the root's clock (a
 * location's object that has not heard from the root yet).
 *
 * @param rootNowMs - the root's clock when the lessor answered: earliest and latest
 * @param sentAtMs - when the ask left, by this clock
 * @param arrivedAtMs - when the answer came, by this clock
 */
export function offsetOf(
  rootNowMs: readonly [number, number],
  sentAtMs: number,
  arrivedAtMs: number
): ClockOffset | undefined {
  const [earliest, latest] = rootNowMs
  if (!Number.isFinite(earliest) || !Number.isFinite(latest)) return undefined
  return { lowMs: earliest - arrivedAtMs - 1, highMs: latest - sentAtMs + 1 }
}

/**
 * The root's clock now, as a lessee knows it (earliest and latest), for its own lessees.
 *
 * @param offset - the lessee's offset, if it has heard from its lessor
 * @param nowMs - its clock
 */
export function rootNowOf(offset: ClockOffset | undefined, nowMs: number): [number, number] {
  return offset
    ? [nowMs + offset.lowMs, nowMs + offset.highMs]
    : [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]
}

/**
 * The root's time at `nowMs` by this clock: the middle of what it may be (for planning: when a
 * window ends, what to ask for; never for whether a unit may be spent).
 *
 * @param offset - the lessee's offset, if known
 * @param nowMs - its clock
 */
export function rootTimeOf(offset: ClockOffset | undefined, nowMs: number): number {
  return offset ? nowMs + (offset.lowMs + offset.highMs) / 2 : nowMs
}

/**
 * When a unit of a root span may be spent here, by this clock: from its start at the latest the
 * root's clock may read it, until its end at the earliest, narrowed for drift over the time to
 * each.
 *
 * @param offset - the lessee's offset when the unit arrived
 * @param span - the unit's span, in the root's time
 * @param nowMs - this clock when it arrived
 */
export function spanHere(
  offset: ClockOffset,
  span: { chargedAtMs: number; validFromMs: number; validUntilMs: number },
  nowMs: number
): { fromMs: number; untilMs: number } {
  const drift = (rootMs: number, ms: number) => Math.floor(DRIFT * Math.max(0, ms - rootMs))
  const rootMs = nowMs + offset.lowMs
  // Spendable from its charge: any time after its answer came is after the charge.
  const fromMs =
    span.validFromMs <= span.chargedAtMs
      ? Number.NEGATIVE_INFINITY
      : span.validFromMs - offset.lowMs + drift(rootMs, span.validFromMs)
  return { fromMs, untilMs: span.validUntilMs - offset.highMs - drift(rootMs, span.validUntilMs) }
}

/**
 * The end of the root's window holding `nowMs`, by this clock (planning).
 *
 * @param policy - a windowed policy
 * @param offset - the lessee's offset, if known
 * @param nowMs - its clock
 */
export function windowEndHere(
  policy: LeasablePolicy,
  offset: ClockOffset | undefined,
  nowMs: number
): number {
  const rootMs = rootTimeOf(offset, nowMs)
  return windowOf(policy, rootMs) + policy.periodMs - (rootMs - nowMs)
}
