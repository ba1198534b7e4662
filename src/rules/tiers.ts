/**
 * @module rules/tiers
 * Tiers: a rule's limit chosen by a request attribute (a header, or a claim of a verified JWT),
 * e.g. free 100/h, paid 1000/h, enterprise 10000/h. An unknown or missing tier gets the rule's
 * own limit.
 */
import * as v from 'valibot'
import type { Policy } from '../algorithms'
import type { RequestFacts } from '../types'
import type { Tiers as TiersDefinition } from './document'
import {
  HEADER_NAME,
  named,
  objectMessage,
  show,
  text,
  wholeNumber,
  type Issue,
} from './schema-parts'

/** The largest tier limit; the same bound as `limit`. */
const MAX_TIER_LIMIT = 1_000_000_000

/** `tiers` as written: `{ "from": "header:x-plan" | "claim:plan", "limits": { "paid": 1000 } }`. */
export const TiersSchema = named<TiersDefinition, TiersDefinition>()(
  v.strictObject(
    {
      from: v.pipe(
        text('"header:<name>" or "claim:<name>"'),
        v.check(
          (from) =>
            (from.startsWith('header:') && HEADER_NAME.test(from.slice(7))) ||
            (from.startsWith('claim:') && from.length > 6),
          (i: Issue) => `${show(i.input)} is not "header:<name>" or "claim:<name>"`
        )
      ),
      limits: v.pipe(
        v.record(
          v.string(),
          wholeNumber(MAX_TIER_LIMIT),
          (i: Issue) => `expected an object of tier names to limits, got ${show(i.input)}`
        ),
        v.check((limits) => Object.keys(limits).length > 0, 'must name at least one tier')
      ),
    },
    objectMessage('a tiers object')
  )
)

/** Compiled tiers. */
export interface Tiers {
  /** Where the tier name comes from. */
  from: { kind: 'header' | 'claim'; name: string }
  /** Limit per tier name. */
  limits: ReadonlyMap<string, number>
  /** The policy per tier name, made once: the rule's with the tier's limit, named by the tier. */
  policies: ReadonlyMap<string, Policy>
}

/**
 * Compiles validated tiers for a rule's policy. A bucket without its own `burst` holds the
 * tier's limit.
 *
 * @param input - the validated `tiers`
 * @param policy - the rule's policy
 * @param explicitBurst - whether the rule set `burst` itself
 */
export function compileTiers(
  input: TiersDefinition,
  policy: Policy,
  explicitBurst: boolean
): Tiers {
  const [kind, ...rest] = input.from.split(':')
  const name = rest.join(':')
  const limits = new Map(Object.entries(input.limits))
  const policies = new Map<string, Policy>()
  for (const [tier, limit] of limits) {
    const tiered =
      'burst' in policy && !explicitBurst
        ? { ...policy, limit, burst: limit, tier }
        : { ...policy, limit, tier }
    policies.set(tier, Object.freeze(tiered))
  }
  return {
    from:
      kind === 'header' ? { kind: 'header', name: name.toLowerCase() } : { kind: 'claim', name },
    limits,
    policies,
  }
}

/**
 * The policy for a request: its tier's, if it has a known one, else the rule's. Claims come
 * only from a verified token (`facts.claims`), so a forged or expired token cannot raise a tier.
 *
 * @param policy - the rule's policy
 * @param tiers - the rule's tiers
 * @param facts - the request
 */
export function tierPolicy(policy: Policy, tiers: Tiers, facts: RequestFacts): Policy {
  const raw =
    tiers.from.kind === 'header'
      ? facts.headers.get(tiers.from.name)
      : facts.claims?.[tiers.from.name]
  return (typeof raw === 'string' ? tiers.policies.get(raw) : undefined) ?? policy
}
