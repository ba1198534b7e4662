/**
 * @module rules/degrade
 * `action: "degrade"`: a limited request is served a lighter answer instead of a 429, either
 * from another origin path (`degradeTo`) or from the same one told so by a header
 * (`degradeHeader`). Schema pieces and the compiled form.
 */
import * as v from 'valibot'
import { show, text, type Issue } from './schema-parts'

/** What a rule does with a request over its limit. */
export const ActionSchema = v.picklist(
  ['reject', 'degrade'],
  (i: Issue) => `${show(i.input)} is not "reject" or "degrade"`
)

/** The origin path a degraded request is sent to instead: absolute, no query, no pattern. */
export const DegradeToSchema = v.pipe(
  text('a path'),
  v.regex(
    /^\/[^?#*\s]*$/,
    (i: Issue) => `${show(i.input)} is not a path (start with "/", no "?", "#", "*" or spaces)`
  )
)

/** `degradeHeader: true`: the request goes on, marked, for the origin to answer lightly. */
export const DegradeHeaderSchema = v.literal(
  true,
  (i: Issue) => `${show(i.input)} must be true (or leave it out)`
)

/** A compiled degradation: where a limited request goes instead of a 429. */
export type Degrade =
  /** To this origin path (query kept), with the original path in a header. */
  | { to: string }
  /** To the same path, marked with `X-RateLimit-Degraded`. */
  | { header: true }

// A rule set lives as long as it is in force: whether it degrades is worked out once per set.
const degrading = new WeakMap<Degrading, boolean>()

/** What of a rule set says whether it degrades. */
type Degrading = { readonly rules: readonly { readonly degrade?: Degrade }[] }

/**
 * Whether any rule of a set degrades (`action: "degrade"`): only then can a request reach the
 * origin marked as degraded, and only then do client-sent copies of those headers need removing.
 *
 * @param ruleSet - the rules in force
 */
export function anyDegrades(ruleSet: Degrading): boolean {
  let found = degrading.get(ruleSet)
  if (found === undefined) {
    found = ruleSet.rules.some((rule) => rule.degrade !== undefined)
    degrading.set(ruleSet, found)
  }
  return found
}
