/**
 * @module http/admin/api
 * The admin API under `ADMIN_PREFIX` (default `/__ratelimit`), enabled only when the secret
 * `ADMIN_TOKEN` is set, behind `Authorization: Bearer <token>` (wrong tokens rate-limited per
 * address). The prefix and its look-alike spellings are never forwarded to the origin.
 *
 *   GET    /rules                 the document in force, which one it is, what was refused
 *   PUT    /rules                 validate, store in KV (current and last-good), in force here
 *   GET    /keys/<rule>/<v>/…     a key's state, without charging it
 *   DELETE /keys/<rule>/<v>/…     reset a key
 *   POST   /explain               what the rules would do with a described request
 *   GET    /stats                 what this isolate's limiter client did since it started, and
 *                                  the live view of all isolates' last 60 minutes (`live`)
 *   GET    /  /ui/app.js  /ui/app.css   the operator page (no data in it: served without the token)
 */
import type { MiddlewareHandler } from 'hono'
import * as v from 'valibot'
import { HttpError } from '../../errors'
import { JSON_BOUNDS, jsonBoundsProblem } from '../../rules'
import { forgetLeases, peek, resetKey } from '../../limiter/client'
import { clientStats } from '../../limiter/calls/stats'
import { explain, ExplainSchema } from './explain'
import { getRules, putRules } from './rules'
import { keyHasher } from '../observe/key-hash'
import { readLive } from '../observe/live'
import { keyOf } from './access'
import { spellsPrefix } from './path'
import { normalPathOf, urlOf } from '../request/url'
import { authorize } from '../request/auth-failures'
import { operatorPage } from '../pages/operator'
import { rulesContext } from '../shared/context'
import { readTextCapped } from '../request/body'
import { readSettings } from '../shared/settings'
import type { LimiterEnv, Wiring } from '../shared/wiring'

/** The largest `POST /explain` body. */
const MAX_EXPLAIN_BYTES = 64 * 1024

/**
 * The admin API, as a middleware that answers everything under the prefix and passes the rest
 * on. Its errors are thrown as `HttpError`s, for the app's error handler to answer.
 *
 * @param options - the rules source and Durable Object namespace the limiter uses
 */
export function adminApi(options: Wiring): MiddlewareHandler<LimiterEnv> {
  return async function adminApi(c, next) {
    const env = c.env
    const settings = readSettings(env)
    // The path as sent (Hono's `c.req.path` is already decoded), so odd spellings stay visible.
    const path = urlOf(c.req.raw).pathname
    const prefix = settings.adminPrefix
    if (path !== prefix && !path.startsWith(`${prefix}/`)) {
      // Other spellings of the prefix (`/__RATELIMIT`, `/__ratelimit;x`, `/%5F_ratelimit`) are
      // answered here too: what was meant for the admin API must not reach the origin.
      if (spellsPrefix(path, prefix, () => normalPathOf(c.req.raw))) throw notFound()
      return next()
    }
    // Without the secret there is no admin API, and the answer does not say there could be one.
    if (!env?.ADMIN_TOKEN) throw notFound()
    const page = operatorPage(c.req.method, prefix, path.slice(prefix.length))
    if (page) return page
    const timeoutMs = settings.limiterTimeoutMs
    await authorize(c.req.raw, {
      secret: env.ADMIN_TOKEN,
      name: 'ADMIN_TOKEN',
      namespace: options.namespaceOf(c),
      timeoutMs,
      strict: true,
    })
    const ruleSet = await options.source.get(rulesContext(c, settings))
    const [resource, ...rest] = path.slice(prefix.length).split('/').filter(Boolean)
    const method = c.req.method
    if (resource === 'rules' && rest.length === 0) {
      if (method === 'GET') return getRules(options.source, ruleSet)
      if (method === 'PUT') return putRules(c.req.raw, options.source, env.RULES)
      throw notAllowed('GET, PUT')
    }
    if (resource === 'keys' && rest.length > 0) {
      const found = keyOf(ruleSet, rest)
      if (method === 'GET') {
        const decision = await peek(
          options.namespaceOf(c),
          { ...found, policy: found.rule.policy },
          timeoutMs
        )
        const hasher = keyHasher(env.KEY_HASH_SECRET, options.namespaceOf(c))
        return Response.json({
          rule: found.rule.id,
          key: found.key,
          // As metrics, the live view and alerts show it when the rule hides its keys.
          hash: await hasher.hidden(found.key),
          ...decision,
          resetAt: new Date(decision.resetAtMs).toISOString(),
        })
      }
      if (method === 'DELETE') {
        await resetKey(options.namespaceOf(c), found, timeoutMs)
        // Units leased before the reset, here and in this location, were charged in the state
        // it wiped.
        await forgetLeases(options.namespaceOf(c), found, timeoutMs)
        return Response.json({ rule: found.rule.id, key: found.key, reset: true })
      }
      throw notAllowed('GET, DELETE')
    }
    if (resource === 'stats' && rest.length === 0) {
      if (method !== 'GET') throw notAllowed('GET')
      const stats = env.LIMITER_STATS
      return Response.json({
        ...clientStats().snapshot(),
        live: stats
          ? await readLive(stats, keyHasher(env.KEY_HASH_SECRET, options.namespaceOf(c)))
          : null,
      })
    }
    if (resource === 'explain' && rest.length === 0) {
      if (method !== 'POST') throw notAllowed('POST')
      const body = parseJson(await readTextCapped(c.req.raw, MAX_EXPLAIN_BYTES))
      const tooBig = jsonBoundsProblem(body, JSON_BOUNDS, '(body)')
      if (tooBig) throw notADescription([tooBig])
      const parsed = v.safeParse(ExplainSchema, body)
      if (!parsed.success) {
        throw notADescription(
          parsed.issues.map((issue) => `${v.getDotPath(issue) ?? '(body)'}: ${issue.message}`)
        )
      }
      return Response.json(
        await explain(parsed.output, ruleSet, options.namespaceOf(c), env, timeoutMs)
      )
    }
    throw new HttpError(404, 'Not Found', `No admin resource at ${path}.`)
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The 404 of the prefix and its spellings without an admin API: it names nothing. */
function notFound(): HttpError {
  return new HttpError(404, 'Not Found', 'Nothing is served at this path.')
}

function notAllowed(allow: string): HttpError {
  return new HttpError(405, 'Method Not Allowed', `Use ${allow}.`, { headers: { Allow: allow } })
}

function notADescription(errors: string[]): HttpError {
  return new HttpError(400, 'Bad Request', 'The body is not a request description.', {
    extensions: { errors },
  })
}
