/**
 * @module rules/cross-check-actions
 * Cross-field checks of what a rule does with a request: counting responses (`countOn`,
 * `maxInFlight`) and degrading instead of refusing (`action`, `degradeTo`, `degradeHeader`).
 */
import { compilePathPattern, pathView } from './match'
import { normalizePath } from './path'
import type { CheckedRule } from './document'

/** Algorithms whose key can be checked before the origin and charged after it. */
const COUNTS_RESPONSES = ['sliding-window', 'fixed-window', 'token-bucket', 'gcra', 'sliding-log']

/**
 * The problems of one rule's `countOn`, `maxInFlight`, `action`, `degradeTo` and
 * `degradeHeader`, each with its field path.
 *
 * @param rule - the rule after schema validation
 * @param at - its path, e.g. `rules[2]`
 */
export function actionProblems(rule: CheckedRule, at: string): string[] {
  const problems: string[] = []
  if (rule.countOn) {
    if (!COUNTS_RESPONSES.includes(rule.algorithm))
      problems.push(
        `${at}.countOn: counting responses works with ${COUNTS_RESPONSES.map((a) => `"${a}"`).join(', ')}, not "${rule.algorithm}"`
      )
    if (rule.consistency === 'leased')
      problems.push(
        `${at}.countOn: a rule counting responses charges after the origin answers, not from a lease; use "consistency": "exact"`
      )
  } else if (rule.maxInFlight !== undefined)
    problems.push(
      `${at}.maxInFlight: it bounds requests between the check and the charge of a rule with countOn; add countOn or leave it out`
    )

  if (rule.action !== 'degrade') {
    if (rule.degradeTo !== undefined)
      problems.push(`${at}.degradeTo: only a rule with "action": "degrade" degrades`)
    if (rule.degradeHeader !== undefined)
      problems.push(`${at}.degradeHeader: only a rule with "action": "degrade" degrades`)
    return problems
  }
  if (rule.algorithm === 'concurrency')
    problems.push(
      `${at}.action: a concurrency limit cannot degrade (its requests wait in a queue or are refused)`
    )
  if (rule.shadow)
    problems.push(`${at}.action: a rule in shadow never limits, so it never degrades`)
  if (rule.degradeTo === undefined && rule.degradeHeader === undefined)
    problems.push(`${at}.action: "degrade" needs degradeTo (a path) or "degradeHeader": true`)
  else if (rule.degradeTo !== undefined && rule.degradeHeader !== undefined)
    problems.push(`${at}.degradeHeader: set degradeTo or degradeHeader, not both`)
  else if (rule.degradeTo !== undefined && limitsOwnPath(rule, rule.degradeTo))
    problems.push(
      `${at}.degradeTo: ${JSON.stringify(rule.degradeTo)} is matched by the rule's own match.path, so degraded requests would be limited by it again; send them outside it`
    )
  return problems
}

/** Whether the rule's own path patterns (all paths, without any) take `path`. */
function limitsOwnPath(rule: CheckedRule, path: string): boolean {
  const patterns = rule.match?.path
  if (patterns === undefined) return true
  const caseSensitive = rule.match?.caseSensitive ?? false
  let normal: string
  try {
    normal = normalizePath(path)
  } catch {
    return false
  }
  const view = pathView(normal)
  const { path: spelled, route } = caseSensitive ? view.exact : view.folded
  return [patterns]
    .flat()
    .map((pattern) => compilePathPattern(pattern, caseSensitive))
    .some((glob) => glob(spelled) || glob(route))
}
