/**
 * @module http/admin/explain
 * `POST <prefix>/explain`: which rules a described request matches, which keys they use, and
 * what each would decide, without charging anything.
 */
import * as v from 'valibot'
import { BadRequestError } from '../../errors'
import { peek, type LimiterNamespace } from '../../limiter/client'
import { planRequest, type Check, type RuleSet, type Skipped } from '../../rules'
import { verifiedClaims } from '../request/claims'
import type { RequestFacts } from '../../types'
import { requestFacts } from '../request/facts'
import { keyHasher, type KeyHasher } from '../observe/key-hash'
import { readSettings } from '../shared/settings'
import type { RateLimitBindings } from '../shared/wiring'

/** The request to explain. */
export const ExplainSchema = v.strictObject({
  method: v.optional(v.pipe(v.string(), v.toUpperCase()), 'GET'),
  url: v.pipe(v.string(), v.url('url must be an absolute URL')),
  headers: v.optional(v.record(v.string(), v.string()), {}),
  ip: v.optional(v.string()),
  country: v.optional(v.string()),
  asn: v.optional(v.number()),
})

/** One rule's part in the explanation. */
interface RuleExplanation {
  rule: string
  applies: boolean
  why?: string
  key?: string
  /** The key as metrics, the live view and alerts show it when the rule hides its keys. */
  hash?: string
  cost?: number
  shadow?: boolean
  limit?: number
  remaining?: number
  resetAt?: string
  wouldAllow?: boolean
  retryAfterMs?: number
}

/** Why a rule that matches does not apply, as the explanation says it. */
const WHY: Record<Skipped['why'], string> = {
  unreadable: 'the request is ambiguous for it',
  'no-key': 'a key part is absent',
  replaced: 'replaced by another rule',
}

/**
 * Explains a request.
 *
 * @param input - the validated description
 * @param ruleSet - the rules in force
 * @param namespace - where the keys' state is
 * @param env - for the JWT secret, if tiers come from claims
 * @param timeoutMs - the longest wait per key
 */
export async function explain(
  input: v.InferOutput<typeof ExplainSchema>,
  ruleSet: RuleSet,
  namespace: LimiterNamespace,
  env: RateLimitBindings | undefined,
  timeoutMs: number
): Promise<Record<string, unknown>> {
  let request: Request
  try {
    const headers = new Headers(input.headers)
    if (input.ip !== undefined) headers.set('cf-connecting-ip', input.ip)
    request = new Request(input.url, { method: input.method, headers })
  } catch (error) {
    throw new BadRequestError(
      'request',
      `The described request is not valid: ${(error as Error).message}`
    )
  }
  let facts: RequestFacts
  try {
    facts = requestFacts(request, readSettings(env).methodOverride)
  } catch (error) {
    // Caught on purpose: the explanation describes the 400 such a request gets.
    if (!(error instanceof BadRequestError)) throw error
    return { outcome: 400, reason: error.message }
  }
  if (input.country !== undefined) facts.country = input.country.toUpperCase()
  if (input.asn !== undefined) facts.asn = input.asn
  if (ruleSet.jwt) {
    const claims = await verifiedClaims(request, ruleSet.jwt, env)
    if (claims) facts.claims = claims
  }

  let plan
  try {
    plan = planRequest(ruleSet, facts)
  } catch (error) {
    // As above: described, not answered.
    if (!(error instanceof BadRequestError)) throw error
    return { outcome: 400, reason: error.message, rule: error.rule }
  }
  if (plan.action === 'deny') return { outcome: 403, listed: plan.denied, rules: [] }
  if (plan.action === 'pass')
    return {
      outcome: 'origin',
      ...(plan.allowed ? { listed: plan.allowed } : { mode: 'off' }),
      rules: [],
    }

  // Every rule whose `match` holds, in document order, as the plan found it.
  const checks = new Map(plan.checks.map((check) => [check.rule, check]))
  const skipped = new Map(plan.skipped.map(({ rule, why }) => [rule, WHY[why]]))
  const hasher = keyHasher(env?.KEY_HASH_SECRET, namespace)
  const rules = await Promise.all(
    ruleSet.rules.flatMap((rule): (RuleExplanation | Promise<RuleExplanation>)[] => {
      const check = checks.get(rule)
      if (check) return [explainCheck(check, namespace, hasher, timeoutMs)]
      const why = skipped.get(rule)
      return why === undefined ? [] : [{ rule: rule.id, applies: false, why }]
    })
  )
  const denied = rules.some((r) => r.applies && !r.shadow && r.wouldAllow === false)
  return {
    outcome: denied ? 429 : 'origin',
    ...(plan.wouldDeny ? { wouldDeny: plan.wouldDeny } : {}),
    rules,
  }
}

/** What the key of a charged rule holds, and whether the request would pass, without charging. */
async function explainCheck(
  check: Check,
  namespace: LimiterNamespace,
  hasher: KeyHasher,
  timeoutMs: number
): Promise<RuleExplanation> {
  const decision = await peek(namespace, check, timeoutMs)
  return {
    rule: check.rule.id,
    applies: true,
    key: check.key,
    ...(check.rule.showKeys ? {} : { hash: await hasher.hidden(check.key) }),
    cost: check.cost,
    shadow: check.shadow,
    limit: decision.limit,
    remaining: decision.remaining,
    resetAt: new Date(decision.resetAtMs).toISOString(),
    wouldAllow: decision.allowed && decision.remaining >= check.cost,
    ...(decision.allowed ? {} : { retryAfterMs: decision.retryAfterMs }),
  }
}
