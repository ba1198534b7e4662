/**
 * @module rules/envoy/limits
 * Which limit applies to a request descriptor, exactly as envoyproxy/ratelimit looks it up:
 * level by level, `key_value` first, then wildcard values in the order written, then `key`
 * alone; a limit counts only at the descriptor's last entry; a request limit overrides all.
 */
import { envoyPolicy } from './limit-block'
import type { EnvoyDomains, EnvoyLimit } from './types'
import type { EnvoyUnit } from './units'

/** One `(key, value)` of a request descriptor. */
export interface EnvoyEntry {
  key: string
  value: string
}

/** The limit found for a descriptor, with what its counter is named by. */
export interface FoundLimit {
  limit: EnvoyLimit
  /** Per entry: the wildcard pattern that replaces the value in the counter's name (share_threshold). */
  sharedValues: ReadonlyMap<number, string>
}

/**
 * Looks up the limit for one descriptor.
 *
 * @param domains - the compiled configurations
 * @param domain - the request's domain
 * @param entries - the descriptor's entries
 * @param override - a limit the request itself sets (envoyproxy/ratelimit's `limit` field)
 * @returns the limit, or `undefined` when none applies (the descriptor is then OK, unlimited)
 */
export function findLimit(
  domains: EnvoyDomains,
  domain: string,
  entries: readonly EnvoyEntry[],
  override?: { requestsPerUnit: number; unit: EnvoyUnit }
): FoundLimit | undefined {
  const root = domains.get(domain)
  if (!root) return undefined
  if (override) {
    // The request's own limit: the one policy not built when the config loaded.
    const { requestsPerUnit, unit } = override
    const limit: EnvoyLimit = {
      requestsPerUnit,
      unit,
      unlimited: false,
      name: '',
      replaces: [],
      shadow: false,
      quota: false,
      algorithm: 'fixed-window',
      // Named as a tier: a request's limit is one of its key's policies, not a rule version.
      policy: {
        ...envoyPolicy('fixed-window', requestsPerUnit, unit),
        tier: `override:${requestsPerUnit}`,
      },
    }
    return { limit, sharedValues: new Map() }
  }
  let children = root.children
  let previous = root
  let found: FoundLimit | undefined
  const sharedValues = new Map<number, string>()
  for (const [index, entry] of entries.entries()) {
    const composite = `${entry.key}_${entry.value}`
    let next = children.get(composite)
    let wildcardKey: string | undefined
    if (!next) {
      for (const wildcard of previous.wildcards) {
        if (wildcard.glob(composite)) {
          next = children.get(wildcard.key)
          wildcardKey = wildcard.key
          break
        }
      }
    }
    next ??= children.get(entry.key)
    if (wildcardKey !== undefined && next?.shareThreshold && next.wildcardPattern) {
      sharedValues.set(index, next.wildcardPattern.slice(entry.key.length + 1))
    }
    if (next?.limit && index === entries.length - 1) found = { limit: next.limit, sharedValues }
    if (!next || next.children.size === 0) break
    children = next.children
    previous = next
  }
  return found
}
