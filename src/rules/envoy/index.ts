/**
 * @module rules/envoy
 * envoyproxy/ratelimit compatibility: configurations, lookup, and its HTTP API's messages.
 */
export { compileEnvoy } from './config'
export type { EnvoyDomains } from './types'
export { findLimit, type EnvoyEntry } from './limits'
export { parseEnvoyRequest } from './request'
export { envoyResponse, planEnvoy } from './decide'
