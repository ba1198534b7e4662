/**
 * @module rules/envoy/decide
 * From a parsed `RateLimitRequest` to the counters to charge, and from their decisions to a
 * `RateLimitResponse` in the proto3 JSON envoyproxy/ratelimit answers with (default values left
 * out, enums by name, durations as `"<seconds>s"`).
 */
import type { Policy } from '../../algorithms'
import type { Decision } from '../../types'
import { findLimit } from './limits'
import type { EnvoyRequest } from './request'
import type { CountedLimit, EnvoyDomains } from './types'
import { UNIT_SECONDS, MAX_UINT32 } from './units'

/** One counter to charge. */
export interface EnvoyCheck {
  limit: CountedLimit
  /** The counter's name: domain and entries, a shared wildcard standing in for its values. */
  key: string
  /** The limit's policy. */
  policy: Policy
  hits: number
}

/** What each descriptor of the request needs. */
export type EnvoySlot =
  { kind: 'none' } | { kind: 'unlimited' } | { kind: 'check'; check: EnvoyCheck }

/**
 * Finds each descriptor's limit and drops those another matched limit `replaces`.
 *
 * A request's `limit` override counts in the configured limit's counter only where
 * envoyproxy/ratelimit would too (its cache key is the descriptor plus the unit's window): when
 * that limit is a fixed window in the same unit. Otherwise the override's counter is named apart
 * by its unit, so it never resets or shares a counter kept under another window or algorithm.
 *
 * @param domains - the compiled configurations
 * @param request - the parsed request
 */
export function planEnvoy(domains: EnvoyDomains, request: EnvoyRequest): EnvoySlot[] {
  const found = request.descriptors.map((d) =>
    findLimit(domains, request.domain, d.entries, d.override)
  )
  const replacing = new Set(found.flatMap((f) => f?.limit.replaces ?? []))
  return found.map((f, i): EnvoySlot => {
    if (!f) return { kind: 'none' }
    if (f.limit.unlimited) return { kind: 'unlimited' }
    if (f.limit.name !== '' && replacing.has(f.limit.name)) return { kind: 'none' }
    const descriptor = request.descriptors[i]!
    const entries = descriptor.entries.map(
      (e, j) =>
        `${encodeURIComponent(e.key)}=${encodeURIComponent(f.sharedValues.get(j) ?? e.value)}`
    )
    // Entries always hold a `=`, so this part cannot be mistaken for one.
    if (descriptor.override && !sharesCounter(domains, request.domain, descriptor))
      entries.push(`unit:${descriptor.override.unit}`)
    return {
      kind: 'check',
      check: {
        limit: f.limit,
        key: ['envoy', encodeURIComponent(request.domain), ...entries].join('|'),
        policy: f.limit.policy,
        hits: descriptor.hits,
      },
    }
  })
}

/** Whether a descriptor's override counts with its configured limit (same fixed window). */
function sharesCounter(
  domains: EnvoyDomains,
  domain: string,
  descriptor: EnvoyRequest['descriptors'][number]
): boolean {
  const configured = findLimit(domains, domain, descriptor.entries)?.limit
  return (
    configured !== undefined &&
    !configured.unlimited &&
    configured.algorithm === 'fixed-window' &&
    configured.unit === descriptor.override?.unit
  )
}

/**
 * The response for a request, given each checked counter's decision.
 *
 * @param slots - from {@link planEnvoy}
 * @param decisions - per slot, the decision of its counter (`undefined` for slots not checked)
 * @param nowMs - the current time, for `durationUntilReset`
 * @param globalShadow - the document's shadow mode: never OVER_LIMIT overall
 * @returns the proto3 JSON body, and whether it is over the limit (an HTTP 429)
 */
export function envoyResponse(
  slots: readonly EnvoySlot[],
  decisions: readonly (Decision | undefined)[],
  nowMs: number,
  globalShadow: boolean
): { body: Record<string, unknown>; overLimit: boolean } {
  let failedRate = 0
  let failedQuota = 0
  let totalQuota = 0
  const statuses = slots.map((slot, i) => {
    if (slot.kind === 'none') return { code: 'OK' }
    if (slot.kind === 'unlimited') return { code: 'OK', limitRemaining: MAX_UINT32 }
    const { limit } = slot.check
    const decision = decisions[i]!
    const over = !decision.allowed
    const code = over && !limit.shadow ? 'OVER_LIMIT' : 'OK'
    if (limit.quota) totalQuota++
    if (code === 'OVER_LIMIT') {
      if (limit.quota) failedQuota++
      else failedRate++
    }
    const status: Record<string, unknown> = { code, currentLimit: currentLimit(limit) }
    const remaining = over ? 0 : decision.remaining
    if (remaining > 0) status.limitRemaining = remaining
    status.durationUntilReset = `${untilReset(slot.check, decision, nowMs)}s`
    return status
  })
  const overLimit =
    !globalShadow && (failedRate > 0 || (totalQuota > 0 && totalQuota === failedQuota))
  return { body: { overallCode: overLimit ? 'OVER_LIMIT' : 'OK', statuses }, overLimit }
}

/** proto3 JSON of a limit: fields in field-number order, defaults left out. */
function currentLimit(limit: CountedLimit): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (limit.requestsPerUnit > 0) out.requestsPerUnit = limit.requestsPerUnit
  out.unit = limit.unit
  if (limit.name !== '') out.name = limit.name
  return out
}

/** Whole seconds to the end of the unit, as envoyproxy/ratelimit computes it; ours for others. */
function untilReset(check: EnvoyCheck, decision: Decision, nowMs: number): number {
  if (check.policy.algorithm === 'fixed-window') {
    const unit = UNIT_SECONDS[check.limit.unit]
    return unit - (Math.floor(nowMs / 1000) % unit)
  }
  return Math.max(0, Math.ceil((decision.resetAtMs - nowMs) / 1000))
}
