/**
 * @module http/request/rate-limit
 * The rate-limit middleware: matches rules, charges every matching key in its Durable Object
 * in parallel, and either answers 429 or lets the request through with headers.
 */
import type { Context, MiddlewareHandler, Next } from 'hono'
import { createMiddleware } from 'hono/factory'
import { HttpError } from '../../errors'
import { logEvent } from '../../log'
import { locateIsolate, type LimiterNamespace } from '../../limiter/client'
import type { RulesSource } from '../../provider/rules-source'
import { anyDegrades, planRequest, type Plan, type RuleSet } from '../../rules'
import type { RequestFacts } from '../../types'
import { chargeAll, refusals, releaseSlots } from './charge'
import { rulesContext, waitUntil } from '../shared/context'
import { verifiedClaims } from './claims'
import { withCors } from './cors'
import { requestFacts } from './facts'
import { messageGate } from './message-limits'
import { observe } from '../observe/record'
import { countResponse } from './count-on'
import { degradation, degradedRequest, DEGRADED_HEADER, withoutDegradeHeaders } from './degrade'
import { rateLimitHeaders, retryHeaders, type HeaderEntry } from './headers'
import {
  forbidden,
  queueTimeout,
  releaseWhenDone,
  tooManyRequests,
  unavailable,
  withHeaders,
} from './responses'
import { corsPolicy, type CorsSetting } from '../shared/cors-policy'
import type { RuleDecision } from '../shared/rule-decision'
import { readSettings, type HeaderMode, type Settings } from '../shared/settings'
import { wire, type LimiterEnv } from '../shared/wiring'

export type { RateLimitBindings } from '../shared/wiring'

/** What the middleware found, for handlers downstream (`c.get('rateLimit')`). */
export interface RateLimitState {
  /** Decisions of the rules that were enforced. */
  decisions: RuleDecision[]
  /** Rules that matched but could not be enforced (their Durable Object failed open). */
  unenforced: string[]
  /**
   * The rule whose `action: "degrade"` sent the request on to a lighter answer (`c.req.raw` is
   * then the degraded request), if one did.
   */
  degradedBy?: string
}

declare module 'hono' {
  interface ContextVariableMap {
    rateLimit: RateLimitState
  }
}

/** Options of {@link rateLimit}. All but `rules` are optional. */
export interface RateLimitOptions {
  /**
   * The rules: a parsed rule set (see `parseRules`), or a source such as `kvRules(defaults)`,
   * which lets the `rules` key of the `RULES` KV namespace override the defaults.
   */
  rules: RuleSet | RulesSource
  /** The Durable Object namespace to count in. @default c.env.LIMITER */
  limiter?: (c: Context) => LimiterNamespace
  /** Which headers to send. @default c.env.RATE_LIMIT_HEADERS, else 'both' */
  headers?: HeaderMode
  /** Longest wait for a Durable Object (ms). @default c.env.LIMITER_TIMEOUT_MS, else 1000 */
  timeoutMs?: number
  /**
   * CORS for the limiter's own answers (429, 403, 400, 503, 504), and the rate-limit headers
   * exposed on the responses it lets through: `'off'`, `'*'`, `'mirror'`, or exact origins
   * (`['https://app.example.com']`). See docs/clients.md, CORS. @default c.env.CORS_ORIGINS, else 'off'
   */
  cors?: CorsSetting
  /** How a shaped request waits (tests pass their own). @default scheduler.wait */
  wait?: (ms: number) => Promise<void>
  /**
   * Builds the 429 response instead of the default problem+json, from the denying rules'
   * `{ check, decision }` and the longest wait among them.
   */
  onLimited?: (
    c: Context,
    denied: RuleDecision[],
    retryAfterMs: number
  ) => Response | Promise<Response>
}

/** How long a shaped request was held before it went to the origin (ms). */
export const DELAY_HEADER = 'X-RateLimit-Delay-Ms'

/** Marks responses of requests whose limits could not be enforced (failed open). */
export const UNENFORCED_HEADER = 'X-RateLimit-Unenforced'

/**
 * Rate-limits requests by the rules in force.
 *
 * Every rule whose `match` holds and whose key parts are all present is charged one unit, in
 * parallel; if any denies, the request gets a 429 and goes no further. A denied request still
 * counts against the rules that allowed it: they were charged at the same moment.
 *
 * @param options - see {@link RateLimitOptions}
 * @returns a Hono middleware
 * @example
 * ```ts
 * import { Hono } from 'hono'
 * import { parseRules, rateLimit } from 'edge-rate-limiter'
 * export { RateLimiterObject } from 'edge-rate-limiter'
 *
 * const app = new Hono<{ Bindings: Env }>()
 * app.use('/api/*', rateLimit({ rules: parseRules(myRules, 'my-rules') }))
 * ```
 */
export const rateLimit = (options: RateLimitOptions): MiddlewareHandler<LimiterEnv> => {
  const { source, namespaceOf } = wire(options.rules, options.limiter)
  const cors =
    options.cors === undefined ? undefined : corsPolicy(options.cors, 'rateLimit(): cors')

  /** The limiter's work for one request: its own answer, or nothing once passed on. */
  async function limit(
    c: Context<LimiterEnv>,
    next: Next,
    settings: Settings
  ): Promise<Response | void> {
    const headerMode = options.headers ?? settings.headers
    const timeoutMs = options.timeoutMs ?? settings.limiterTimeoutMs
    const ruleSet = await source.get(rulesContext(c, settings))
    // The origin trusts the degradation headers: only the limiter may write them. Under rules
    // that degrade nothing there is nothing to trust, and the headers need not be read.
    if (anyDegrades(ruleSet)) c.req.raw = withoutDegradeHeaders(c.req.raw)
    let plan: Plan
    let facts: RequestFacts
    try {
      // A path with a control character is refused here, whatever the rules: never forwarded.
      facts = requestFacts(c.req.raw, settings.methodOverride)
      if (ruleSet.jwt) {
        const claims = await verifiedClaims(c.req.raw, ruleSet.jwt, c.env)
        if (claims) facts.claims = claims
      }
      plan = planRequest(ruleSet, facts)
    } catch (error) {
      // A request the rules cannot read (a `BadRequestError`) is answered here, not thrown: a
      // library user's app then needs no error handler for it.
      if (error instanceof HttpError) return error.getResponse()
      throw error
    }
    if (plan.action === 'deny') return forbidden(plan.denied)
    const unreadable =
      plan.action === 'limit' && plan.skipped.length > 0
        ? plan.skipped.filter(({ why }) => why === 'unreadable')
        : []
    if (unreadable.length > 0) {
      const rules = unreadable.map(({ rule }) => rule.id)
      logEvent('warn', 'rate-limit-would-deny', { rules, reason: 'bad request' })
    }
    if (plan.action === 'limit' && plan.wouldDeny !== undefined) {
      logEvent('warn', 'deny-list-would-deny', { match: plan.wouldDeny })
    }
    if (plan.action === 'pass' || plan.checks.length === 0) {
      c.set('rateLimit', { decisions: [], unenforced: [] })
      return next()
    }

    const namespace = namespaceOf(c)
    if (!namespace) {
      // A deployment mistake, not a limiter outage: failing open here would hide it for good.
      throw new Error(
        'rateLimit(): no Durable Object namespace; bind LIMITER in wrangler.toml or pass options.limiter'
      )
    }
    locateIsolate(c.req.raw)
    const charged = await chargeAll(namespace, plan.checks, timeoutMs)
    const { decisions, unenforced, failedClosed } = charged
    // Only a concurrency slot has anything to release: most requests hold none.
    const holdsSlots = decisions.some(({ decision }) => decision.leaseId !== undefined)
    const releaseAll = () => {
      if (holdsSlots) waitUntil(c, releaseSlots(namespace, decisions, timeoutMs))
    }
    const denied = refusals(decisions)
    const degradedBy = denied.length > 0 ? degradation(denied) : undefined
    observe(c, namespace, plan.checks, charged, facts, degradedBy)
    if (failedClosed.length > 0) {
      releaseAll()
      return unavailable(failedClosed)
    }
    c.set('rateLimit', {
      decisions,
      unenforced,
      ...(degradedBy ? { degradedBy: degradedBy.rule.id } : {}),
    })
    const headersFor = (items: readonly RuleDecision[]) => {
      const visible = items.filter(({ check }) => !check.inFlight)
      const shown = ruleSet.shadowHeaders ? visible : visible.filter(({ check }) => !check.shadow)
      const headers = rateLimitHeaders(shown, headerMode)
      if (unenforced.length > 0) headers.push([UNENFORCED_HEADER, unenforced.join(', ')])
      return headers
    }

    if (denied.length > 0 && !degradedBy) {
      releaseAll()
      const headers = headersFor(decisions)
      const waitedOut = denied.filter(({ decision }) => decision.timedOut)
      if (waitedOut.length === denied.length) return withHeaders(queueTimeout(waitedOut), headers)
      const retryAfterMs = Math.max(...denied.map(({ decision }) => decision.retryAfterMs))
      const all = [...headers, ...retryHeaders(retryAfterMs)]
      // The default 429 is made with the headers; an app's own answer gets them copied on.
      if (!options.onLimited) return tooManyRequests(denied, retryAfterMs, all)
      return withHeaders(await options.onLimited(c, denied, retryAfterMs), all)
    }
    if (degradedBy) {
      logEvent('warn', 'rate-limit-degraded', { rule: degradedBy.rule.id, key: degradedBy.key })
      c.req.raw = degradedRequest(c.req.raw, degradedBy)
    }

    const delayMs = Math.max(
      0,
      ...decisions.map(({ check, decision }) => (check.shadow ? 0 : (decision.delayMs ?? 0)))
    )
    const extra: HeaderEntry[] = degradedBy ? [[DEGRADED_HEADER, degradedBy.rule.id]] : []
    if (delayMs > 0) {
      // A leaky-bucket shaper admitted the request for a later slot: hold it until then.
      extra.push([DELAY_HEADER, String(delayMs)])
      logEvent('warn', 'rate-limit-shaped', {
        delayMs,
        rules: decisions.filter((d) => d.decision.delayMs).map((d) => d.check.rule.id),
      })
      await (options.wait ?? ((ms: number) => scheduler.wait(ms)))(delayMs)
    }

    await next()
    // Rules that count responses are charged now; their headers show the charge.
    const counting = decisions.some(({ check }) => check.deferred)
    const counted = counting ? countResponse(namespace, decisions, c.res, timeoutMs) : undefined
    if (counted) waitUntil(c, counted.done)
    const headers = [...headersFor(counted?.decisions ?? decisions), ...extra]
    // Concurrency slots are held until the origin's response body has been sent (or failed);
    // `maxInFlight` slots until the response is charged (above).
    const slots = decisions.filter(({ check, decision }) => decision.leaseId && !check.inFlight)
    const withOurs = withHeaders(c.res, headers, counted?.internalHeaders)
    // A WebSocket under rules with `messages` is relayed, its client's messages counted.
    const gate = withOurs.webSocket ? messageGate(namespace, plan.checks, timeoutMs) : undefined
    const response =
      slots.length > 0 || gate
        ? releaseWhenDone(
            withOurs,
            () => releaseSlots(namespace, slots, timeoutMs),
            (p) => waitUntil(c, p),
            gate
          )
        : withOurs
    // Hono's setter would copy the old response's headers over ours; clearing it first prevents that.
    c.res = undefined
    c.res = response
  }

  return createMiddleware<LimiterEnv>(async function rateLimit(c, next) {
    const settings = readSettings(c.env)
    const policy = cors ?? settings.cors
    if (policy.mode === 'off') return limit(c, next, settings)
    return withCors(c, policy, () => limit(c, next, settings))
  })
}
