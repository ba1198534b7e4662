/**
 * @module rules
 * Rules as data: validation, matching, keys.
 */
export {
  parseRules,
  parseRulesText,
  type KeyPart,
  type Matcher,
  type Rule,
  type RuleSet,
} from './parse'
export { compilePathPattern, matchRules, matches } from './match'
export { limitKey, keyPartValue, pathKeyValue } from './key'
export { parseDuration, formatDuration, MAX_PERIOD_MS } from './duration'
export { MAX_LIMIT, METHODS } from './schema'
export { normalizePath, patternPath, routeOf } from './path'
export { JSON_BOUNDS, jsonBoundsProblem, type JsonBounds } from './json-bounds'
export { normalizeHost } from './host'
export { compileGlob, type Glob } from './glob'
export { planRequest, type Check, type Plan } from './plan'
export { requestCost, MAX_COST, type Cost } from './cost'
export { compileList, type ListMatcher } from './lists'
export { advertisedQuota } from './quota'
export { compileTiers, tierPolicy, type Tiers } from './tiers'
export type { JwtConfig } from './jwt'
export * from './envoy'
