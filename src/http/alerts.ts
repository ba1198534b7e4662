/**
 * @module http/alerts
 * Near-limit and limited-burst events: noticed in the request with a map look-up, announced
 * after the response (a log line, and a JSON POST to `ALERT_WEBHOOK_URL` when set). Each is
 * debounced in the isolate: a near-limit once per rule, key and window; a burst once per rule
 * and minute. The maps are bounded. Webhook failures are logged, never retried.
 */
import { formatDuration, type Check } from '../rules'
import type { Decision } from '../types'
import { shownKey } from './key-hash'

/** The longest a webhook POST may take before it is given up (it runs after the response). */
const WEBHOOK_TIMEOUT_MS = 10_000

/** Rule and key pairs remembered for near-limit debouncing. */
const MAX_REMEMBERED = 10_000

/** Near-limit: `rule\nkey` to the window it last fired in. */
const nearLimitFired = new Map<string, number>()

/** Limited keys per rule in the current minute, up to one past the burst threshold. */
const limitedKeys = new Map<string, { minute: number; keys: Set<string>; fired: boolean }>()

/**
 * Whether an allowed decision crosses its rule's `nearLimit` for the first time this window
 * (remaining ≤ (1 − nearLimit) × limit).
 *
 * @param check - the charged check
 * @param decision - its decision
 * @param nowMs - the current time
 */
export function crossesNearLimit(check: Check, decision: Decision, nowMs: number): boolean {
  const fraction = check.rule.nearLimit
  if (fraction === undefined || !decision.allowed) return false
  if (decision.remaining > (1 - fraction) * decision.limit) return false
  const window = Math.floor(nowMs / check.policy.periodMs)
  const id = `${check.rule.id}\n${check.key}`
  if (nearLimitFired.get(id) === window) return false
  // Re-inserted so the map's order is by last firing, and the oldest goes first when full.
  nearLimitFired.delete(id)
  if (nearLimitFired.size >= MAX_REMEMBERED)
    nearLimitFired.delete(nearLimitFired.keys().next().value!)
  nearLimitFired.set(id, window)
  return true
}

/**
 * Notes a limited key; true when its rule has now limited more than `threshold` keys this
 * minute (once per rule and minute).
 *
 * @param check - the limited check
 * @param threshold - `LIMITED_BURST_KEYS`
 * @param minute - the current minute's start
 */
export function burstsLimits(check: Check, threshold: number, minute: number): boolean {
  let seen = limitedKeys.get(check.rule.id)
  if (!seen || seen.minute !== minute)
    limitedKeys.set(check.rule.id, (seen = { minute, keys: new Set(), fired: false }))
  if (seen.fired) return false
  seen.keys.add(check.key)
  if (seen.keys.size <= threshold) return false
  seen.fired = true
  seen.keys.clear()
  return true
}

/** An event to announce. */
export type Alert =
  | { event: 'near-limit'; check: Check; decision: Decision }
  | { event: 'limited-burst'; check: Check; keys: number; minute: number }

/**
 * Logs an event and POSTs it to the webhook, if one is set. Never throws.
 *
 * @param alert - the event
 * @param webhookUrl - `ALERT_WEBHOOK_URL`, or '' for none
 */
export async function announce(alert: Alert, webhookUrl: string): Promise<void> {
  try {
    const body = await alertBody(alert)
    console.warn(JSON.stringify({ ...body, event: `rate-limit-${alert.event}` }))
    if (webhookUrl === '') return
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    })
    await response.body?.cancel()
    if (!response.ok) throw new Error(`the webhook answered ${response.status}`)
  } catch (error) {
    console.warn(
      JSON.stringify({ event: 'alert-webhook-failed', alert: alert.event, error: String(error) })
    )
  }
}

async function alertBody(alert: Alert): Promise<Record<string, unknown>> {
  const { rule, policy } = alert.check
  if (alert.event === 'limited-burst')
    return {
      event: alert.event,
      rule: rule.id,
      keys: alert.keys,
      minute: new Date(alert.minute).toISOString(),
    }
  return {
    event: alert.event,
    rule: rule.id,
    key: await shownKey(rule, alert.check.key),
    limit: alert.decision.limit,
    remaining: alert.decision.remaining,
    window: formatDuration(policy.periodMs),
    resetAt: new Date(alert.decision.resetAtMs).toISOString(),
  }
}
