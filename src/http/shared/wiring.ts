/**
 * @module http/shared/wiring
 * What the rate limiter, the admin API and `/json` share: the Worker bindings they read, and
 * where the rules and the counters are, with the defaults set here once.
 */
import type { Context } from 'hono'
import type { LimiterNamespace } from '../../limiter/client'
import type { LiveStatsObject } from '../../limiter/live-stats-object'
import { staticRules, type RulesSource } from '../../provider/rules-source'
import type { RuleSet } from '../../rules'
import type { SecretVars } from './credentials'
import type { SettingsVars } from './settings'

/** The dataset binding, as far as it is used (a test passes one that records). */
export interface MetricsDataset {
  writeDataPoint(point: AnalyticsEngineDataPoint): void
}

/** The stats object's namespace (`LIMITER_STATS`). */
export type LiveStatsNamespace = DurableObjectNamespace<LiveStatsObject>

/** The bindings the limiter reads. */
export interface RateLimitBindings extends SettingsVars, SecretVars {
  /** The Durable Object namespace counters live in (unless `rateLimit({ limiter })` says otherwise). */
  LIMITER: LimiterNamespace
  /** Where `kvRules` reads the rules in force. */
  RULES?: KVNamespace
  /** The live view's stats object; without it there is no live view. */
  LIMITER_STATS?: LiveStatsNamespace
  /** Workers Analytics Engine dataset for a data point per decision; without it none is written. */
  RATE_LIMIT_METRICS?: MetricsDataset
}

/**
 * The Hono env of the limiter's middleware. An app driven without an env (`app.request(path)`
 * in a test) has none at all, hence the `c.env?.` where a binding is optional.
 */
export interface LimiterEnv {
  Bindings: RateLimitBindings
}

/** Where the rules and the counters are, the same for every endpoint of the limiter. */
export interface Wiring {
  /** The rules in force. */
  source: RulesSource
  /** The Durable Object namespace to count in. */
  namespaceOf: (c: Context<LimiterEnv>) => LimiterNamespace
}

/**
 * Wires rules and counters with their defaults: a fixed rule set is a static source, and the
 * counters are in the `LIMITER` binding unless `limiter` says otherwise.
 *
 * @param rules - a rule set, or a rules source
 * @param limiter - picks the Durable Object namespace for a request
 */
export function wire(
  rules: RuleSet | RulesSource,
  limiter?: (c: Context<LimiterEnv>) => LimiterNamespace
): Wiring {
  return {
    source: 'get' in rules ? rules : staticRules(rules),
    namespaceOf: limiter ?? ((c) => c.env.LIMITER),
  }
}
