/**
 * @module lib
 * The limiter as a library, for Hono Workers that mount it on their own routes.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono'
 * import { kvRules, parseRules, rateLimit } from 'edge-rate-limiter'
 * export { RateLimiterObject } from 'edge-rate-limiter'
 *
 * const app = new Hono<{ Bindings: Env }>()
 * app.use('/api/*', rateLimit({ rules: kvRules(parseRules(myRules, 'my-rules')) }))
 * ```
 */
export { rateLimit, UNENFORCED_HEADER } from './http/request/rate-limit'
export type { RateLimitBindings, RateLimitOptions, RateLimitState } from './http/request/rate-limit'
export type { RuleDecision } from './http/shared/rule-decision'
export type { HeaderMode } from './http/shared/settings'
export type { CorsSetting } from './http/shared/cors-policy'
export { RateLimiterObject } from './limiter/rate-limiter-object'
export { LiveStatsObject } from './limiter/live-stats-object'
export { kvRules, staticRules, RULES_KV_KEY, LAST_GOOD_KV_KEY } from './provider/rules-source'
export type { RulesSource, RulesContext, RulesStatus } from './provider/rules-source'
export { parseRules, parseRulesText } from './rules'
export type { Rule, RuleSet } from './rules'
export type {
  RulesDocument,
  RuleDefinition,
  CheckedRulesDocument,
  CheckedRule,
} from './rules/document'
export { RuleConfigError, LimiterUnavailableError } from './errors'
export type { Decision, FailMode } from './types'
export { createApp } from './app'
