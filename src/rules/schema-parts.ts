/**
 * @module rules/schema-parts
 * Building blocks of the rules schemas, each with a message a person can act on.
 */
import * as v from 'valibot'
import { parseDuration } from './duration'

/** Whether each of two types is assignable to the other. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** `T` with every field, at every depth, required: a missing optional field then shows. */
type DeepRequired<T> = T extends object ? { [K in keyof T]-?: DeepRequired<T[K]> } : T

/**
 * Whether two types are the same: each assignable to the other, also with every optional field
 * made required (assignability alone lets a type leave out an optional field the other has).
 */
type Same<A, B> = Mutual<A, B> extends true ? Mutual<DeepRequired<A>, DeepRequired<B>> : false

/**
 * `schema`, declared as validating `TInput` (as written) into `TOutput`: declarations then name
 * those types instead of spelling out the schema's inferred ones. tsc refuses the call when the
 * schema's inferred input or output and the named type differ in either direction (the message
 * shows the inferred type), so the named types cannot drift from what is validated.
 *
 * @example `export const TiersSchema = named<Tiers, Tiers>()(v.strictObject({ … }))`
 */
export function named<TInput, TOutput>() {
  return <S extends v.GenericSchema<unknown, unknown, v.BaseIssue<unknown>>>(
    schema: S &
      (Same<v.InferInput<S>, TInput> extends true
        ? Same<v.InferOutput<S>, TOutput> extends true
          ? unknown
          : { '~the output differs from the named type': v.InferOutput<S> }
        : { '~the input differs from the named type': v.InferInput<S> })
  ): v.GenericSchema<TInput, TOutput> =>
    schema as v.GenericSchema<unknown> as v.GenericSchema<TInput, TOutput>
}

/** The fields of a valibot issue that messages use. */
export type Issue = { input: unknown; expected: string | null; received: string; type: string }

/** JSON-ish rendering of a value for messages, cut short. */
export function show(input: unknown): string {
  const rendered = typeof input === 'string' ? JSON.stringify(input) : String(JSON.stringify(input))
  return rendered.length > 60 ? `${rendered.slice(0, 57)}...` : rendered
}

/** Messages for object issues: unknown field, missing field, or not an object at all. */
export function objectMessage(what: string) {
  return (issue: Issue) => {
    if (issue.expected === 'never') return `unknown field ${issue.received}`
    if (issue.received === 'undefined') return 'is required'
    return `expected ${what}, got ${show(issue.input)}`
  }
}

/** A string, or a message naming what was expected. */
export const text = (what: string) =>
  v.string((i: Issue) => `expected ${what}, got ${show(i.input)}`)

/** A whole number from `min` (default 1) to `max`. */
export const wholeNumber = (max: number, min = 1) =>
  v.pipe(
    v.number((i: Issue) => `expected a whole number, got ${show(i.input)}`),
    v.integer((i: Issue) => `${show(i.input)} is not a whole number`),
    v.minValue(min, (i: Issue) => `${show(i.input)} must be at least ${min}`),
    v.maxValue(max, (i: Issue) => `${show(i.input)} must be at most ${max}`)
  )

function durationMessage(input: unknown): string {
  return `${show(input)} is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)`
}

/** A duration (see `duration.ts`), as whole ms. */
export const duration = v.pipe(
  v.union([v.string(), v.number()], (i: Issue) => durationMessage(i.input)),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const ms = parseDuration(dataset.value)
    if (ms !== undefined) return ms
    addIssue({ message: durationMessage(dataset.value) })
    return NEVER
  })
)

/** One item or a non-empty list of them. */
export const oneOrMany = (item: v.GenericSchema<string, string>, what: string) =>
  v.union(
    [item, v.pipe(v.array(item), v.minLength(1, 'must not be empty'))],
    (i: Issue) => `expected ${what} or a list of them, got ${show(i.input)}`
  )

/** A rule id: 1-64 letters, digits, `_ - . :`, starting with a letter or digit. */
export const ruleId = v.pipe(
  text('a rule id'),
  v.regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/,
    (i: Issue) => `${show(i.input)} is not a rule id (1-64 letters, digits, "_", "-", ".", ":")`
  )
)

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** A header name, lower-cased. */
export const headerName = v.pipe(
  text('a header name'),
  v.regex(HEADER_NAME, (i: Issue) => `${show(i.input)} is not a header name`),
  v.transform((name) => name.toLowerCase())
)

/** A non-empty list of the values a header or query parameter must have. */
export const valueList = v.pipe(
  v.array(text('a value'), (i: Issue) => `expected a list of values, got ${show(i.input)}`),
  v.minLength(1, 'must not be empty')
)
