/**
 * @module rules
 * Rules as data: validation, matching, keys.
 */
export { parseRules, parseRulesText, type Rule, type RuleSet } from './parse'
export { matchRules } from './match'
export { limitKey } from './key'
export { parseDuration, formatDuration } from './duration'
export { normalizePath, patternPath } from './path'
export { normalizeHost } from './host'
export { compileGlob } from './glob'
export { planRequest, type Check, type Plan } from './plan'
export { advertisedQuota } from './quota'
export type { JwtConfig } from './jwt'
export * from './envoy'
