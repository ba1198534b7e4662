/**
 * @module http/rate-limit
 * The rate-limit middleware: matches rules, charges every matching key in its Durable Object
 * in parallel, and either answers 429 or lets the request through with headers.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { createMiddleware } from 'hono/factory'
import { LimiterUnavailableError, UnusableKeyError } from '../errors'
import { limit, type LimiterNamespace, type LimitResult } from '../limiter/client'
import { staticRules, type RulesSource } from '../provider/rules-source'
import { limitKey, matchRules, type Rule, type RuleSet } from '../rules'
import { requestFacts } from './facts'
import {
  rateLimitHeaders,
  retryAfterSeconds,
  retryHeaders,
  type HeaderEntry,
  type RuleDecision,
} from './headers'
import { problemResponse } from './problem'
import { readSettings, type HeaderMode, type SettingsVars } from './settings'

/** The bindings the middleware reads by default. */
export interface RateLimitBindings extends SettingsVars {
  LIMITER: LimiterNamespace
  RULES?: KVNamespace
}

/** What the middleware found, for handlers downstream (`c.get('rateLimit')`). */
export interface RateLimitState {
  /** Decisions of the rules that were enforced. */
  decisions: RuleDecision[]
  /** Rules that matched but could not be enforced (their Durable Object failed open). */
  unenforced: string[]
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
  /** Builds the 429 response instead of the default problem+json. */
  onLimited?: (
    c: Context,
    denied: RuleDecision[],
    retryAfterMs: number
  ) => Response | Promise<Response>
}

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
export const rateLimit = (
  options: RateLimitOptions
): MiddlewareHandler<{ Bindings: RateLimitBindings }> => {
  const source = toSource(options.rules)
  const namespaceOf: (c: Context) => LimiterNamespace = options.limiter ?? ((c) => c.env.LIMITER)

  return createMiddleware<{ Bindings: RateLimitBindings }>(async function rateLimit(c, next) {
    const settings = readSettings(c.env)
    const headerMode = options.headers ?? settings.headers
    const timeoutMs = options.timeoutMs ?? settings.limiterTimeoutMs
    const ruleSet = await source.get({
      kv: c.env?.RULES,
      refreshMs: settings.rulesRefreshMs,
      waitUntil: (promise) => waitUntil(c, promise),
    })
    const facts = requestFacts(c.req.raw)
    const checks: { rule: Rule; key: string }[] = []
    for (const rule of matchRules(ruleSet, facts)) {
      let key: string | undefined
      try {
        key = limitKey(rule, facts)
      } catch (error) {
        if (error instanceof UnusableKeyError) return badKey(rule, error)
        throw error
      }
      if (key !== undefined) checks.push({ rule, key })
    }
    if (checks.length === 0) {
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
    const results = await Promise.all(
      checks.map(
        async ({
          rule,
          key,
        }): Promise<{ rule: Rule; result: LimitResult | LimiterUnavailableError }> => {
          const call = {
            ruleId: rule.id,
            key,
            policy: rule.policy,
            cost: 1,
            failMode: rule.failMode,
          }
          try {
            return { rule, result: await limit(namespace, call, timeoutMs) }
          } catch (error) {
            if (error instanceof LimiterUnavailableError) return { rule, result: error }
            throw error
          }
        }
      )
    )
    const failedClosed = results.filter(({ result }) => result instanceof LimiterUnavailableError)
    if (failedClosed.length > 0) return unavailable(failedClosed)

    const decisions: RuleDecision[] = []
    const unenforced: string[] = []
    for (const { rule, result } of results) {
      if (result instanceof LimiterUnavailableError) continue
      if (result.enforced) decisions.push({ rule, decision: result.decision })
      else unenforced.push(rule.id)
    }
    c.set('rateLimit', { decisions, unenforced })
    const nowMs = Date.now()
    const headers = rateLimitHeaders(decisions, nowMs, headerMode)
    if (unenforced.length > 0) headers.push([UNENFORCED_HEADER, unenforced.join(', ')])

    const denied = decisions.filter(({ decision }) => !decision.allowed)
    if (denied.length > 0) {
      const retryAfterMs = Math.max(...denied.map(({ decision }) => decision.retryAfterMs))
      const response = options.onLimited
        ? await options.onLimited(c, denied, retryAfterMs)
        : tooManyRequests(denied, retryAfterMs)
      return withHeaders(response, [...headers, ...retryHeaders(retryAfterMs)])
    }

    await next()
    const response = withHeaders(c.res, headers)
    // Hono's setter would copy the old response's headers over ours; clearing it first prevents that.
    c.res = undefined
    c.res = response
  })
}

/** `c.executionCtx` throws where there is none (e.g. `app.request()` in a test); then just run. */
function waitUntil(c: Context, promise: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(promise)
  } catch {
    promise.catch(() => {})
  }
}

function toSource(rules: RuleSet | RulesSource): RulesSource {
  return 'get' in rules ? rules : staticRules(rules)
}

/** The default 429: an RFC 9457 problem naming the rule that denied the request. */
function tooManyRequests(denied: RuleDecision[], retryAfterMs: number): Response {
  const binding = denied.reduce((a, b) =>
    b.decision.retryAfterMs > a.decision.retryAfterMs ? b : a
  )
  const seconds = retryAfterSeconds(retryAfterMs)
  return problemResponse({
    type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
    title: 'Too Many Requests',
    status: 429,
    detail: `Rate limit "${binding.rule.id}" (${binding.rule.summary}) exceeded. Retry in ${seconds} s.`,
    rule: binding.rule.id,
    retry_after: seconds,
    'violated-policies': denied.map(({ rule }) => rule.id),
  })
}

/** The 400 of a request whose key for a rule is ambiguous. */
function badKey(rule: Rule, error: UnusableKeyError): Response {
  return problemResponse({
    title: 'Bad Request',
    status: 400,
    detail: `${error.message} Rule "${rule.id}" keys on ${error.part}.`,
    rule: rule.id,
  })
}

/** The 503 of rules that fail closed and could not be decided. */
function unavailable(
  failed: { rule: Rule; result: LimitResult | LimiterUnavailableError }[]
): Response {
  const rules = failed.map(({ rule }) => rule.id)
  const reasons = [
    ...new Set(failed.map(({ result }) => (result as LimiterUnavailableError).reason)),
  ]
  console.error(JSON.stringify({ event: 'rate-limit-fail-closed', rules, reasons }))
  return problemResponse(
    {
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      title: 'Service Unavailable',
      status: 503,
      detail: `The rate limiter could not decide (${reasons.join(', ')}) and ${rules.map((id) => `"${id}"`).join(', ')} fail${rules.length === 1 ? 's' : ''} closed.`,
      rules,
    },
    { 'Retry-After': '1' }
  )
}

/** Structured-field lists: an origin's own items stay, ours are added after them. */
const LIST_FIELDS = new Set(['ratelimit', 'ratelimit-policy'])

/**
 * A response with headers added. Responses from `fetch()` have immutable headers, so it is
 * re-wrapped (the body still streams). The limiter's legacy `X-RateLimit-*` values replace an
 * origin's; its `RateLimit` and `RateLimit-Policy` items are appended to an origin's, so a client
 * sees both policies. A WebSocket upgrade cannot be re-wrapped and is left as it is.
 */
function withHeaders(response: Response, headers: readonly HeaderEntry[]): Response {
  if (headers.length === 0 || response.status === 101 || response.webSocket) return response
  const copy = new Response(response.body, response)
  for (const [name, value] of headers) {
    if (LIST_FIELDS.has(name.toLowerCase())) copy.headers.append(name, value)
    else copy.headers.set(name, value)
  }
  return copy
}
