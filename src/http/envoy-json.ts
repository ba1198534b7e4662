/**
 * @module http/envoy-json
 * `POST /json`: envoyproxy/ratelimit's HTTP decision endpoint, for the domains of the rules
 * document, counting in the same Durable Objects as the proxy path. 200 when OK, 429 when over
 * the limit, 400 for a malformed request; guarded by its own bearer token, `DECISION_TOKEN`
 * (not the admin token: a caller that may spend quotas must not be able to rewrite the rules),
 * since an open endpoint at the edge would let anyone spend other clients' quotas.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { BadRequestError, LimiterUnavailableError } from '../errors'
import { charge, type LimiterNamespace } from '../limiter/client'
import type { RulesSource } from '../provider/rules-source'
import { envoyResponse, parseEnvoyRequest, planEnvoy } from '../rules'
import type { Decision } from '../types'
import { contentTooLarge } from './admin-access'
import { authorize } from './auth-failures'
import { rulesContext } from './context'
import { readTextCapped } from './body'
import type { SecretVars } from './credentials'
import { problemResponse } from './problem'
import { readSettings, type SettingsVars } from './settings'

/** Whose counters these are, for Durable Object names and logs. */
const ENVOY_RULE = { id: 'envoy' }

/** The largest request body taken. */
const MAX_BODY_BYTES = 64 * 1024

/**
 * The `/json` endpoint, as a middleware: it answers `POST <DECISION_PATH>` once the rules in
 * force define Envoy `domains` and `DECISION_TOKEN` is set, and passes everything else on.
 *
 * @param options - the rules source and Durable Object namespace the limiter uses
 */
export function envoyJson(options: {
  source: RulesSource
  namespaceOf: (c: Context) => LimiterNamespace
}): MiddlewareHandler {
  return async function envoyJson(c, next) {
    const env = c.env as (SettingsVars & SecretVars & { RULES?: KVNamespace }) | undefined
    const settings = readSettings(env)
    if (c.req.method !== 'POST' || c.req.path !== settings.decisionPath) return next()
    const ruleSet = await options.source.get(rulesContext(c, settings))
    if (ruleSet.domains.size === 0 || !env?.DECISION_TOKEN) return next()
    const namespace = options.namespaceOf(c)
    const refused = await authorize(c.req.raw, {
      secret: env.DECISION_TOKEN,
      name: 'DECISION_TOKEN',
      namespace,
      timeoutMs: settings.limiterTimeoutMs,
      strict: false,
    })
    if (refused) return refused
    const text = await readTextCapped(c.req.raw, MAX_BODY_BYTES)
    if (text === undefined) return contentTooLarge(MAX_BODY_BYTES)
    let request
    try {
      request = parseEnvoyRequest(JSON.parse(text))
    } catch (error) {
      const detail =
        error instanceof BadRequestError
          ? error.message
          : `The body is not JSON: ${(error as Error).message}`
      return problemResponse({ title: 'Bad Request', status: 400, detail })
    }
    const slots =
      ruleSet.mode === 'off'
        ? request.descriptors.map(() => ({ kind: 'none' as const }))
        : planEnvoy(ruleSet.domains, request)
    let decisions: (Decision | undefined)[]
    try {
      decisions = await Promise.all(
        slots.map(async (slot) => {
          if (slot.kind !== 'check') return undefined
          const { key, policy, hits } = slot.check
          const result = await charge(
            namespace,
            { rule: ENVOY_RULE, key, policy, cost: hits, failMode: 'closed' },
            settings.limiterTimeoutMs
          )
          return result.enforced ? result.decision : undefined
        })
      )
    } catch (error) {
      if (!(error instanceof LimiterUnavailableError)) throw error
      return problemResponse({
        title: 'Service Unavailable',
        status: 503,
        detail: `A counter could not answer (${error.reason}).`,
      })
    }
    const { body, overLimit } = envoyResponse(
      slots,
      decisions,
      Date.now(),
      ruleSet.mode === 'shadow'
    )
    return Response.json(body, { status: overLimit ? 429 : 200 })
  }
}
