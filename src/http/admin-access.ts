/**
 * @module http/admin-access
 * Helpers of the admin API and `/json`: body limits, which key a path names.
 */
import { BadRequestError } from '../errors'
import { normalizePath, pathKeyValue, type Rule, type RuleSet } from '../rules'
import { clientAddress } from './facts'
import { problemResponse } from './problem'

/** The rule and limit key named by `/keys/<rule>/<value>/…` (values percent-decoded). */
export function keyOf(
  ruleSet: RuleSet,
  segments: string[]
): { rule: Rule; key: string } | Response {
  const [ruleId, ...encoded] = segments
  const rule = ruleSet.rules.find((r) => r.id === ruleId)
  if (!rule) return problem(404, 'Not Found', `No rule has the id ${JSON.stringify(ruleId)}.`)
  if (encoded.length !== rule.key.length) {
    return problem(
      400,
      'Bad Request',
      `Rule "${rule.id}" has ${rule.key.length} key part(s); the path gives ${encoded.length}.`
    )
  }
  let values: string[]
  try {
    values = encoded.map(decodeURIComponent)
  } catch {
    return problem(400, 'Bad Request', 'A key value is not valid percent-encoding.')
  }
  // An address is grouped the way requests are, so a raw IPv6 address finds its /64; a path
  // is spelled the way requests are, so `/Login/` finds the key of `/login`.
  let parts: string[]
  try {
    parts = values.map((value, i) => {
      const part = rule.key[i]!
      if (part.kind === 'ip') return clientAddress(value) ?? value
      if (part.kind === 'path') return pathKeyValue(normalizePath(value), part.fold)
      return value
    })
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error
    return problem(400, 'Bad Request', error.message)
  }
  return { rule, key: [rule.id, ...parts.map(encodeURIComponent)].join('|') }
}

/**
 * A problem+json response, in one call.
 *
 * @param status - the HTTP status
 * @param title - its title
 * @param detail - what went wrong, for the caller
 * @param headers - extra headers
 * @param extra - extension members of the body
 */
export function problem(
  status: number,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {}
): Response {
  return problemResponse({ title, status, detail, ...extra }, headers)
}

/**
 * The 413 for a body over `maxBytes`.
 *
 * @param maxBytes - the limit that was exceeded
 */
export function contentTooLarge(maxBytes: number): Response {
  return problem(413, 'Content Too Large', `The body must be at most ${maxBytes} bytes.`)
}
