/**
 * @module rules/envoy
 * envoyproxy/ratelimit compatibility: configurations, lookup, and its HTTP API's messages.
 */
export {
  compileEnvoy,
  type EnvoyDomains,
  type EnvoyLimit,
  type EnvoyNode,
  type EnvoyOrigin,
} from './config'
export { findLimit, type EnvoyEntry, type FoundLimit } from './limits'
export { parseEnvoyRequest, type EnvoyDescriptor, type EnvoyRequest } from './request'
export { envoyResponse, planEnvoy, type EnvoyCheck, type EnvoySlot } from './decide'
export { UNIT_SECONDS, parseUnit, type EnvoyUnit } from './units'
