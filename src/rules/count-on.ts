/**
 * @module rules/count-on
 * `countOn`: a rule that counts responses, not requests (failed logins, errors, what the origin
 * reports as a request's cost). Before the origin the key is only checked; a response that
 * matches is charged after it. Schema, compiled form and the pure test of a response.
 */
import * as v from 'valibot'
import type { ConcurrencyPolicy } from '../algorithms'
import type { CountOn as CountOnDefinition } from './document'
import { headerName, named, objectMessage, show, wholeNumber, type Issue } from './schema-parts'

/** A status class (`"5xx"`) or an inclusive range (`"500-503"`), or one status code. */
const STATUS_TEXT = /^(?:([1-5])xx|([1-5]\d\d)-([1-5]\d\d))$/

const statusItem = v.union(
  [
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(100, (i: Issue) => `${show(i.input)} is not a status code (100-599)`),
      v.maxValue(599, (i: Issue) => `${show(i.input)} is not a status code (100-599)`)
    ),
    v.pipe(
      v.string(),
      v.check(
        (text) => statusRange(text) !== undefined,
        (i: Issue) =>
          `${show(i.input)} is not a status, a class like "5xx" or a range like "500-503"`
      )
    ),
  ],
  (i: Issue) =>
    `${show(i.input)} is not a status code (100-599), a class like "5xx" or a range like "500-503"`
)

/** `countOn` as written. */
export const CountOnSchema = named<CountOnDefinition, CountOnDefinition>()(
  v.pipe(
    v.strictObject(
      {
        status: v.optional(
          v.pipe(
            v.array(statusItem, (i: Issue) => `expected a list of statuses, got ${show(i.input)}`),
            v.minLength(1, 'must not be empty')
          )
        ),
        header: v.optional(headerName),
      },
      objectMessage('an object with "status" and/or "header"')
    ),
    v.check(
      (countOn) => countOn.status !== undefined || countOn.header !== undefined,
      'needs "status" (which responses count) or "header" (what they cost), or both'
    )
  )
)

/** `maxInFlight`: how many requests of one key may be between check and charge at once. */
export const MaxInFlightSchema = wholeNumber(10_000)

/** A compiled `countOn`. */
export interface CountOn {
  /** Whether a response with this status is counted (every status when absent). */
  counts: (status: number) => boolean
  /** The response header naming what it costs, lower-case (the rule's cost when absent). */
  costHeader?: string
  /** The statuses as written, for messages and the explain answer. */
  statuses: readonly (number | string)[]
  /**
   * `maxInFlight`: the slot a request of one key holds from its check until its response is
   * charged (a concurrency limit on an object of its own, no queue), if bounded.
   */
  inFlight?: ConcurrencyPolicy
}

/**
 * The longest a `maxInFlight` slot is held when its release never comes (a Worker that died):
 * the lease of the slot, as a concurrency rule's `lease`.
 */
export const IN_FLIGHT_LEASE_MS = 60_000

/**
 * Compiles `countOn` (and `maxInFlight`, which bounds it).
 *
 * @param input - the validated `countOn`
 * @param maxInFlight - the rule's `maxInFlight`, if any
 */
export function compileCountOn(input: CountOnDefinition, maxInFlight: number | undefined): CountOn {
  const ranges = (input.status ?? []).map((item): [number, number] =>
    typeof item === 'number' ? [item, item] : statusRange(item)!
  )
  const counts =
    ranges.length === 0
      ? () => true
      : (status: number) => ranges.some(([low, high]) => status >= low && status <= high)
  return Object.freeze({
    counts,
    statuses: Object.freeze([...(input.status ?? [])]),
    ...(input.header !== undefined ? { costHeader: input.header } : {}),
    ...(maxInFlight !== undefined
      ? {
          inFlight: Object.freeze({
            algorithm: 'concurrency' as const,
            limit: maxInFlight,
            periodMs: IN_FLIGHT_LEASE_MS,
            queue: 0,
            maxWaitMs: 0,
          }),
        }
      : {}),
  })
}

/**
 * What a counted response costs: the origin's cost header when it holds a whole number from 0
 * to `max`, else the request's cost. A missing or garbled header errs towards counting.
 *
 * @param countOn - the compiled `countOn`
 * @param header - the value of its cost header on the response, if any
 * @param requestCost - what the rule would charge the request
 * @param max - the most one response may cost (the rule's capacity)
 */
export function responseCost(
  countOn: CountOn,
  header: string | null,
  requestCost: number,
  max: number
): number {
  if (countOn.costHeader === undefined || header === null) return requestCost
  const text = header.trim()
  if (!/^\d{1,10}$/.test(text)) return requestCost
  return Math.min(Number(text), max)
}

/** `[low, high]` of a status class or range, if the text is one. */
function statusRange(text: string): [number, number] | undefined {
  const match = STATUS_TEXT.exec(text)
  if (!match) return undefined
  if (match[1] !== undefined) return [Number(match[1]) * 100, Number(match[1]) * 100 + 99]
  const low = Number(match[2])
  const high = Number(match[3])
  return low <= high ? [low, high] : undefined
}
