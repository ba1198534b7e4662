/**
 * @module http/admin
 * The admin API under `ADMIN_PREFIX` (default `/__ratelimit`), enabled only when the secret
 * `ADMIN_TOKEN` is set, behind `Authorization: Bearer <token>`. Never forwarded to the origin.
 *
 *   GET    /rules                 the document in force
 *   PUT    /rules                 validate, store in KV, in force in this isolate at once
 *   GET    /keys/<rule>/<v>/…     a key's state, without charging it
 *   DELETE /keys/<rule>/<v>/…     reset a key
 *   POST   /explain               what the rules would do with a described request
 */
import type { Context, MiddlewareHandler } from 'hono'
import * as v from 'valibot'
import { BadRequestError, LimiterUnavailableError, RuleConfigError } from '../errors'
import { JSON_BOUNDS, jsonBoundsProblem, normalizePath } from '../rules'
import { peek, resetKey, type LimiterNamespace } from '../limiter/client'
import type { RulesSource } from '../provider/rules-source'
import { explain, ExplainSchema } from './admin-explain'
import { contentTooLarge, keyOf, problem, requireBearer } from './admin-access'
import { rulesContext } from './context'
import { readTextCapped } from './body'
import { readSettings, type SettingsVars } from './settings'

/** The largest rules document `PUT /rules` takes. */
const MAX_RULES_BYTES = 1024 * 1024
/** The largest `POST /explain` body. */
const MAX_EXPLAIN_BYTES = 64 * 1024

/** What the admin API needs from the app. */
export interface AdminOptions {
  /** The same rules source the limiter uses. */
  source: RulesSource
  /** Where to read the rules source's KV namespace and the Durable Objects from. */
  namespaceOf: (c: Context) => LimiterNamespace
}

/**
 * The admin API, as a middleware that answers everything under the prefix and passes the rest on.
 *
 * @param options - the rules source and Durable Object namespace the limiter uses
 */
export function adminApi(options: AdminOptions): MiddlewareHandler {
  return async function adminApi(c, next) {
    const env = c.env as (SettingsVars & { ADMIN_TOKEN?: string; RULES?: KVNamespace }) | undefined
    const settings = readSettings(env)
    // The path as sent (Hono's `c.req.path` is already decoded), so odd spellings stay visible.
    const path = new URL(c.req.url).pathname
    const prefix = settings.adminPrefix
    const under = (p: string) => p === prefix || p.startsWith(`${prefix}/`)
    if (!under(path)) {
      // Other spellings of the prefix (`//__ratelimit`, `/%5F_ratelimit`) must not reach the
      // origin; only a path with an escape or a double slash can be one, so most skip the check.
      const odd = path.includes('%') || path.includes('//')
      if (odd && under(spelledPath(path)))
        return problem(404, 'Not Found', `Use ${prefix} as written.`)
      return next()
    }
    if (!env?.ADMIN_TOKEN) {
      return problem(404, 'Not Found', 'The admin API is disabled: set the ADMIN_TOKEN secret.')
    }
    const refused = await requireBearer(c.req.header('authorization'), env.ADMIN_TOKEN)
    if (refused) return refused
    const ruleSet = await options.source.get(rulesContext(c, settings))
    const [resource, ...rest] = path.slice(prefix.length).split('/').filter(Boolean)
    const method = c.req.method
    const timeoutMs = settings.limiterTimeoutMs
    try {
      if (resource === 'rules' && rest.length === 0) {
        if (method === 'GET')
          return Response.json({ source: ruleSet.source, document: ruleSet.document })
        if (method === 'PUT') return await putRules(c.req.raw, options.source, env.RULES)
        return notAllowed('GET, PUT')
      }
      if (resource === 'keys' && rest.length > 0) {
        const found = keyOf(ruleSet, rest)
        if (found instanceof Response) return found
        if (method === 'GET') {
          const decision = await peek(
            options.namespaceOf(c),
            { ruleId: found.rule.id, key: found.key, policy: found.rule.policy },
            timeoutMs
          )
          return Response.json({
            rule: found.rule.id,
            key: found.key,
            ...decision,
            resetAt: new Date(decision.resetAtMs).toISOString(),
          })
        }
        if (method === 'DELETE') {
          await resetKey(
            options.namespaceOf(c),
            { ruleId: found.rule.id, key: found.key },
            timeoutMs
          )
          return Response.json({ rule: found.rule.id, key: found.key, reset: true })
        }
        return notAllowed('GET, DELETE')
      }
      if (resource === 'explain' && rest.length === 0) {
        if (method !== 'POST') return notAllowed('POST')
        const text = await readTextCapped(c.req.raw, MAX_EXPLAIN_BYTES)
        if (text === undefined) return contentTooLarge(MAX_EXPLAIN_BYTES)
        const body = parseJson(text)
        const tooBig = jsonBoundsProblem(body, JSON_BOUNDS, '(body)')
        if (tooBig)
          return problem(
            400,
            'Bad Request',
            'The body is not a request description.',
            {},
            {
              errors: [tooBig],
            }
          )
        const parsed = v.safeParse(ExplainSchema, body)
        if (!parsed.success) {
          return problem(
            400,
            'Bad Request',
            'The body is not a request description.',
            {},
            {
              errors: parsed.issues.map(
                (issue) => `${v.getDotPath(issue) ?? '(body)'}: ${issue.message}`
              ),
            }
          )
        }
        try {
          return Response.json(
            await explain(parsed.output, ruleSet, options.namespaceOf(c), env, timeoutMs)
          )
        } catch (error) {
          if (!(error instanceof BadRequestError)) throw error
          return problem(400, 'Bad Request', error.message)
        }
      }
      return problem(404, 'Not Found', `No admin resource at ${path}.`)
    } catch (error) {
      if (!(error instanceof LimiterUnavailableError)) throw error
      return problem(
        503,
        'Service Unavailable',
        `The key's Durable Object could not answer (${error.reason}).`
      )
    }
  }
}

async function putRules(
  request: Request,
  source: RulesSource,
  kv: KVNamespace | undefined
): Promise<Response> {
  if (!source.put || !kv)
    return problem(409, 'Conflict', 'These rules are fixed: there is no KV namespace to write to.')
  const text = await readTextCapped(request, MAX_RULES_BYTES)
  if (text === undefined) return contentTooLarge(MAX_RULES_BYTES)
  try {
    const ruleSet = await source.put(kv, text)
    return Response.json({
      source: ruleSet.source,
      rules: ruleSet.rules.length,
      inForce: 'this isolate now; others within their refresh interval plus KV propagation',
    })
  } catch (error) {
    if (!(error instanceof RuleConfigError)) throw error
    return problem(
      400,
      'Bad Request',
      'The rules document is invalid; nothing changed.',
      {},
      { errors: error.problems }
    )
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function notAllowed(allow: string): Response {
  return problem(405, 'Method Not Allowed', `Use ${allow}.`, { Allow: allow })
}

/** The normalised path, or the path as sent if it is refused (the rate limiter answers it 400). */
function spelledPath(path: string): string {
  try {
    return normalizePath(path)
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error
    return path
  }
}
