/**
 * @module rules
 * Rules as data: validation, matching, keys.
 */
export { parseRules, parseRulesText } from './parse'
export type { Rule, RuleSet } from './types'
export { compilePathPattern } from './match'
export { limitKey, pathKeyValue } from './key'
export { parseDuration, formatDuration } from './duration'
export { METHODS } from './schema'
export { normalizePath, patternPath, routeOf } from './path'
export { JSON_BOUNDS, jsonBoundsProblem } from './json-bounds'
export { normalizeHost } from './host'
export { compileGlob } from './glob'
export { foldHeaderName, headerSpellings } from './fields'
export { anyDegrades } from './degrade'
export { planRequest, type Check, type Plan, type Skipped } from './plan'
export { advertisedQuota } from './quota'
export { responseCost } from './count-on'
export type { JwtConfig } from './jwt'
export * from './envoy'
