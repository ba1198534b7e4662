/**
 * @module http/observe/alerts
 * Near-limit and limited-burst events: noticed in the request with a map look-up, announced
 * after the response (a log line, and a JSON POST to `ALERT_WEBHOOK_URL` when set).
 *
 * A client chooses how many keys it sends, so every step has a budget. An event is debounced
 * (a near-limit once per rule, key and window; a burst once per rule and minute); a rule may
 * announce {@link ALERTS_PER_RULE_PER_MINUTE} events a minute in an isolate, and the rest are
 * counted into one `alerts-suppressed` event for the minute. Webhook POSTs wait in a bounded
 * queue: each request sends at most one, and an isolate has at most
 * {@link MAX_WEBHOOKS_IN_FLIGHT} in flight. Failures are logged, never retried.
 */
import { formatDuration, type Check } from '../../rules'
import type { Decision } from '../../types'
import { logEvent } from '../../log'
import type { KeyHasher } from './key-hash'

/** Events one rule may announce per isolate and minute, near-limit and limited-burst together. */
export const ALERTS_PER_RULE_PER_MINUTE = 10

/** Webhook POSTs an isolate has in flight at most. */
export const MAX_WEBHOOKS_IN_FLIGHT = 4

/** Announcements waiting for a request to send them; past this they are counted, not queued. */
const MAX_QUEUED = 100

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
  /** What a rule's budget left out in a minute. */
  | {
      event: 'alerts-suppressed'
      rule: string
      minute: number
      nearLimit: number
      limitedBurst: number
    }

/** What a rule announced and left out in the current minute. */
interface RuleTally {
  announced: number
  nearLimit: number
  limitedBurst: number
}

/**
 * One isolate's alert budget and webhook queue. The module keeps one ({@link alertDesk}); tests
 * make their own.
 */
export class AlertDesk {
  #minute = Number.NEGATIVE_INFINITY
  readonly #rules = new Map<string, RuleTally>()
  readonly #queue: { alert: Alert; url: string }[] = []
  #inFlight = 0

  /**
   * Takes an event: logged and queued for the webhook while its rule's budget lasts, else
   * counted for the minute's `alerts-suppressed` event.
   *
   * @param alert - the event
   * @param nowMs - the current time
   * @param hasher - shows the log line's key as the rule allows
   * @param webhookUrl - `ALERT_WEBHOOK_URL` ('' for none: nothing is queued)
   * @returns the log line's writing (it may hash the key), or `undefined` when left out
   */
  take(
    alert: Exclude<Alert, { event: 'alerts-suppressed' }>,
    nowMs: number,
    hasher: KeyHasher,
    webhookUrl: string
  ): Promise<void> | undefined {
    this.tick(nowMs, webhookUrl)
    const ruleId = alert.check.rule.id
    const tally = this.#rules.get(ruleId) ?? { announced: 0, nearLimit: 0, limitedBurst: 0 }
    this.#rules.set(ruleId, tally)
    const full = webhookUrl !== '' && this.#queue.length >= MAX_QUEUED
    if (tally.announced >= ALERTS_PER_RULE_PER_MINUTE || full) {
      if (alert.event === 'near-limit') tally.nearLimit++
      else tally.limitedBurst++
      return undefined
    }
    tally.announced++
    if (webhookUrl !== '') this.#queue.push({ alert, url: webhookUrl })
    return alertBody(alert, hasher).then(({ event, ...fields }) =>
      logEvent('warn', `rate-limit-${String(event)}`, fields)
    )
  }

  /**
   * Starts a new minute when one is due: every rule that left events out in the last gets one
   * `alerts-suppressed` event, logged and queued for the webhook (one per rule and minute, past
   * the queue's bound).
   *
   * @param nowMs - the current time
   * @param webhookUrl - `ALERT_WEBHOOK_URL` ('' for none: nothing is queued)
   */
  tick(nowMs: number, webhookUrl: string): void {
    const minute = Math.floor(nowMs / 60_000) * 60_000
    if (minute === this.#minute) return
    const ended = this.#minute
    this.#minute = minute
    for (const [rule, { nearLimit, limitedBurst }] of this.#rules) {
      if (nearLimit + limitedBurst === 0) continue
      const summary = {
        event: 'alerts-suppressed',
        rule,
        minute: ended,
        nearLimit,
        limitedBurst,
      } as const
      const { event, ...fields } = summaryBody(summary)
      logEvent('warn', `rate-limit-${event}`, fields)
      if (webhookUrl !== '') this.#queue.push({ alert: summary, url: webhookUrl })
    }
    this.#rules.clear()
  }

  /**
   * Sends the oldest queued event to the webhook, unless {@link MAX_WEBHOOKS_IN_FLIGHT} are in
   * flight already: at most one POST per call, and one call per request. Never throws.
   *
   * @param hasher - shows the key as the rule allows
   * @returns the POST under way, or `undefined` when none was started
   */
  sendOne(hasher: KeyHasher): Promise<void> | undefined {
    if (this.#inFlight >= MAX_WEBHOOKS_IN_FLIGHT) return undefined
    const next = this.#queue.shift()
    if (!next) return undefined
    this.#inFlight++
    return post(next.alert, next.url, hasher).finally(() => this.#inFlight--)
  }

  /** Events waiting for the webhook. */
  get queued(): number {
    return this.#queue.length
  }
}

/** This isolate's desk. */
export const alertDesk = new AlertDesk()

async function post(alert: Alert, webhookUrl: string, hasher: KeyHasher): Promise<void> {
  try {
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(await alertBody(alert, hasher)),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    })
    await response.body?.cancel()
    if (!response.ok) throw new Error(`the webhook answered ${response.status}`)
  } catch (error) {
    logEvent('warn', 'alert-webhook-failed', { alert: alert.event, error: String(error) })
  }
}

async function alertBody(alert: Alert, hasher: KeyHasher): Promise<Record<string, unknown>> {
  if (alert.event === 'alerts-suppressed') return summaryBody(alert)
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
    key: await hasher.shown(rule, alert.check.key),
    limit: alert.decision.limit,
    remaining: alert.decision.remaining,
    window: formatDuration(policy.periodMs),
    resetAt: new Date(alert.decision.resetAtMs).toISOString(),
  }
}

function summaryBody(alert: Extract<Alert, { event: 'alerts-suppressed' }>) {
  return {
    event: alert.event,
    rule: alert.rule,
    minute: new Date(alert.minute).toISOString(),
    perMinute: ALERTS_PER_RULE_PER_MINUTE,
    suppressed: { 'near-limit': alert.nearLimit, 'limited-burst': alert.limitedBurst },
  }
}
