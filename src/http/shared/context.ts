/**
 * @module http/shared/context
 * What every part of the app reads the same way from a request's context.
 */
import type { Context } from 'hono'
import type { RulesContext } from '../../provider/rules-source'
import type { Settings } from './settings'
import type { LimiterEnv } from './wiring'

/**
 * Keeps `promise` running past the response. `c.executionCtx` throws where there is none
 * (e.g. `app.request()` in a test); then the promise just runs.
 *
 * @param c - the request's context
 * @param promise - the work to keep alive
 */
export function waitUntil(c: Context, promise: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(promise)
  } catch {
    promise.catch(() => {})
  }
}

/**
 * How a request asks the rules source for the rules in force.
 *
 * @param c - the request's context (its env holds the `RULES` namespace)
 * @param settings - the parsed vars
 */
export function rulesContext(c: Context<LimiterEnv>, settings: Settings): RulesContext {
  return {
    kv: c.env?.RULES,
    refreshMs: settings.rulesRefreshMs,
    waitUntil: (promise) => waitUntil(c, promise),
  }
}
