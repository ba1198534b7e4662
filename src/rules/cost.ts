/**
 * @module rules/cost
 * How many units a request takes from a rule: a constant, or a number the request carries in a
 * header, bounded and validated.
 */
import * as v from 'valibot'
import { BadRequestError } from '../errors'
import type { RequestFacts } from '../types'
import { compileField, fieldValue, type Field } from './fields'
import type { CheckedCost, Cost as CostDefinition } from './document'
import { headerName, named, objectMessage, show, wholeNumber, type Issue } from './schema-parts'

/** The largest cost a rule may charge. */
export const MAX_COST = 1_000_000

/** `cost` as written: a whole number, or `{ header, max, default? }`. */
export const CostSchema = named<CostDefinition, CheckedCost>()(
  v.union(
    [
      wholeNumber(MAX_COST),
      v.strictObject(
        {
          header: headerName,
          max: wholeNumber(MAX_COST),
          default: v.optional(wholeNumber(MAX_COST), 1),
        },
        objectMessage('a cost object')
      ),
    ],
    (i: Issue) =>
      `${show(i.input)} is not a cost (use a whole number, or { "header": "<name>", "max": <n> })`
  )
)

/** A compiled cost: a constant, or a header to read (under any of its spellings). */
export type Cost = number | { header: Field; max: number; default: number }

/**
 * Compiles a validated cost.
 *
 * @param input - the validated `cost`, if the rule has one
 */
export function compileCost(input: CheckedCost | undefined): Cost {
  if (input === undefined) return 1
  if (typeof input === 'number') return input
  return { header: compileField('header', input.header), max: input.max, default: input.default }
}

const WHOLE = /^[0-9]+$/

/**
 * The cost of a request under a rule.
 *
 * @param cost - the rule's compiled cost
 * @param facts - the request
 * @throws {BadRequestError} when the header holds anything but a whole number from 1 to `max`
 *   (or two spellings of it differ): a bad value is refused, never charged as 0 or the default
 */
export function requestCost(cost: Cost, facts: RequestFacts): number {
  if (typeof cost === 'number') return cost
  const value = fieldValue(cost.header, facts, true)
  if (value === undefined) return cost.default
  const units = WHOLE.test(value) ? Number(value) : Number.NaN
  if (!(units >= 1 && units <= cost.max)) {
    throw new BadRequestError(
      `header:${cost.header.name}`,
      `The ${cost.header.name} header must be a whole number from 1 to ${cost.max}, not ${show(value)}.`
    )
  }
  return units
}
