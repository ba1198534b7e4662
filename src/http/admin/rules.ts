/**
 * @module http/admin/rules
 * `GET` and `PUT /rules` of the admin API: which document is in force, and replacing it.
 */
import { HttpError, RuleConfigError } from '../../errors'
import type { RuleSet } from '../../rules'
import type { RulesSource, RulesStatus } from '../../provider/rules-source'
import { readTextCapped } from '../request/body'

/** The largest rules document `PUT /rules` takes. */
const MAX_RULES_BYTES = 1024 * 1024

/**
 * The document in force in this isolate, which one it is, and the `rules` value it refused.
 *
 * @param source - the rules source the limiter uses
 * @param ruleSet - the rules it just served (a fixed source has no status)
 */
export function getRules(source: RulesSource, ruleSet: RuleSet): Response {
  const status: RulesStatus = source.status?.() ?? {
    ruleSet,
    inForce: 'static',
    revision: null,
    updatedAt: null,
  }
  return Response.json(describe(status))
}

/**
 * Validates the body, stores it in KV with the next revision (as `rules` and `rules:last-good`),
 * and puts it in force in this isolate.
 *
 * @param request - the admin request
 * @param source - the rules source the limiter uses
 * @param kv - the `RULES` namespace, if bound
 * @throws {HttpError} 409 when the rules are fixed, 413 for a body too large, 400 listing every
 *   problem of an invalid document
 */
export async function putRules(
  request: Request,
  source: RulesSource,
  kv: KVNamespace | undefined
): Promise<Response> {
  if (!source.put || !kv)
    throw new HttpError(
      409,
      'Conflict',
      'These rules are fixed: there is no KV namespace to write to.'
    )
  const text = await readTextCapped(request, MAX_RULES_BYTES)
  const status = await source.put(kv, text).catch((error: unknown) => {
    // The document is the request's body here: its problems are the client's to fix.
    if (!(error instanceof RuleConfigError)) throw error
    throw new HttpError(400, 'Bad Request', 'The rules document is invalid; nothing changed.', {
      extensions: { errors: error.problems },
      cause: error,
    })
  })
  const { document: _document, ...summary } = describe(status)
  return Response.json({
    ...summary,
    rules: status.ruleSet.rules.length,
    propagation:
      'in force in this isolate now; others within their refresh interval plus KV propagation',
  })
}

function describe(status: RulesStatus) {
  return {
    source: status.ruleSet.source,
    inForce: status.inForce,
    revision: status.revision,
    updatedAt: status.updatedAt,
    document: status.ruleSet.document,
    ...(status.rejected ? { rejected: status.rejected } : {}),
  }
}
