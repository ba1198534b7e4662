/**
 * @module http/request/envoy-json
 * `POST /json`: envoyproxy/ratelimit's HTTP decision endpoint, for the domains of the rules
 * document, counting in the same Durable Objects as the proxy path. 200 when OK, 429 when over
 * the limit, 400 for a malformed request; guarded by its own bearer token, `DECISION_TOKEN`
 * (not the admin token: a caller that may spend quotas must not be able to rewrite the rules),
 * since an open endpoint at the edge would let anyone spend other clients' quotas.
 */
import type { MiddlewareHandler } from 'hono'
import { BadRequestError } from '../../errors'
import { charge } from '../../limiter/client'
import { envoyResponse, parseEnvoyRequest, planEnvoy } from '../../rules'
import type { Decision } from '../../types'
import { authorize } from './auth-failures'
import { rulesContext } from '../shared/context'
import { readTextCapped } from './body'
import { readSettings } from '../shared/settings'
import type { LimiterEnv, Wiring } from '../shared/wiring'

/** Whose counters these are, for Durable Object names and logs. */
const ENVOY_RULE = { id: 'envoy' }

/** The largest request body taken. */
const MAX_BODY_BYTES = 64 * 1024

/**
 * The `/json` endpoint, as a middleware: it answers `POST <DECISION_PATH>` once the rules in
 * force define Envoy `domains` and `DECISION_TOKEN` is set, and passes everything else on. Its
 * errors (400, 401, 413, 429, 503) are thrown as `HttpError`s, for the app's error handler.
 *
 * @param options - the rules source and Durable Object namespace the limiter uses
 */
export function envoyJson(options: Wiring): MiddlewareHandler<LimiterEnv> {
  return async function envoyJson(c, next) {
    const env = c.env
    const settings = readSettings(env)
    if (c.req.method !== 'POST' || c.req.path !== settings.decisionPath) return next()
    const ruleSet = await options.source.get(rulesContext(c, settings))
    if (ruleSet.domains.size === 0 || !env?.DECISION_TOKEN) return next()
    const namespace = options.namespaceOf(c)
    await authorize(c.req.raw, {
      secret: env.DECISION_TOKEN,
      name: 'DECISION_TOKEN',
      namespace,
      timeoutMs: settings.limiterTimeoutMs,
      strict: false,
    })
    const request = parseEnvoyRequest(parseJson(await readTextCapped(c.req.raw, MAX_BODY_BYTES)))
    const slots =
      ruleSet.mode === 'off'
        ? request.descriptors.map(() => ({ kind: 'none' as const }))
        : planEnvoy(ruleSet.domains, request)
    // The document's jurisdiction holds for its Envoy counters too.
    const rule = ruleSet.jurisdiction
      ? { ...ENVOY_RULE, placement: { jurisdiction: ruleSet.jurisdiction } }
      : ENVOY_RULE
    // Every counter fails closed: a counter that cannot answer is a 503 (LimiterUnavailableError).
    const decisions: (Decision | undefined)[] = await Promise.all(
      slots.map(async (slot) => {
        if (slot.kind !== 'check') return undefined
        const { key, policy, hits } = slot.check
        const result = await charge(
          namespace,
          { rule, key, policy, cost: hits, failMode: 'closed' },
          settings.limiterTimeoutMs
        )
        return result.enforced ? result.decision : undefined
      })
    )
    const { body, overLimit } = envoyResponse(
      slots,
      decisions,
      Date.now(),
      ruleSet.mode === 'shadow'
    )
    return Response.json(body, { status: overLimit ? 429 : 200 })
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new BadRequestError('body', `The body is not JSON: ${(error as Error).message}`)
  }
}
