/**
 * @module http/admin/access
 * Which key an admin path names.
 */
import { BadRequestError, HttpError } from '../../errors'
import { normalizePath, pathKeyValue, type Rule, type RuleSet } from '../../rules'
import { clientAddress } from '../request/facts'

/**
 * The rule and limit key named by `/keys/<rule>/<value>/…` (values percent-decoded).
 *
 * @param ruleSet - the rules in force
 * @param segments - the path's segments after `keys`
 * @throws {HttpError} 404 for an unknown rule, 400 for a value that cannot be a key part
 */
export function keyOf(ruleSet: RuleSet, segments: string[]): { rule: Rule; key: string } {
  const [ruleId, ...encoded] = segments
  const rule = ruleSet.rules.find((r) => r.id === ruleId)
  if (!rule) throw new HttpError(404, 'Not Found', `No rule has the id ${JSON.stringify(ruleId)}.`)
  if (encoded.length !== rule.key.length) {
    throw new BadRequestError(
      'path',
      `Rule "${rule.id}" has ${rule.key.length} key part(s); the path gives ${encoded.length}.`
    )
  }
  let values: string[]
  try {
    values = encoded.map(decodeURIComponent)
  } catch {
    throw new BadRequestError('path', 'A key value is not valid percent-encoding.')
  }
  // An address is grouped the way requests are, so a raw IPv6 address finds its /64; a path
  // is spelled the way requests are, so `/Login/` finds the key of `/login` (or is refused
  // with the 400 a request with that path gets).
  const parts = values.map((value, i) => {
    const part = rule.key[i]!
    if (part.kind === 'ip') return clientAddress(value) ?? value
    if (part.kind === 'path') return pathKeyValue(normalizePath(value), part.fold)
    return value
  })
  return { rule, key: [rule.id, ...parts.map(encodeURIComponent)].join('|') }
}
