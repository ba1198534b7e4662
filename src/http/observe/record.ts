/**
 * @module http/observe/record
 * What the limiter records of each request's decisions, off the critical path: counts for the
 * live view (a few map updates, in the request), Analytics Engine points, alerts and the live
 * view's flush (all in `waitUntil`). `METRICS=off` turns all of it off.
 */
import type { Context } from 'hono'
import type { Check } from '../../rules'
import { minuteOf } from '../../live'
import type { LimiterNamespace } from '../../limiter/client'
import { alertDesk, burstsLimits, crossesNearLimit, type Alert } from './alerts'
import { keyHasher } from './key-hash'
import { writeMetrics, type MetricEvent } from './analytics'
import type { Charged, RuleDecision } from '../shared/rule-decision'
import { waitUntil } from '../shared/context'
import { flushDue, flushLive, liveTally } from './live'
import { readSettings } from '../shared/settings'
import type { LimiterEnv } from '../shared/wiring'

/**
 * Records a request's decisions. Synchronous apart from the work it hands to `waitUntil`;
 * nothing it does can change a decision.
 *
 * @param c - the request's context
 * @param namespace - the `LIMITER` binding (it keys the hash of hidden keys without a secret)
 * @param checks - the plan's checks (to find the rules that failed open)
 * @param charged - what charging them gave
 * @param where - the request's facts, whose `country` (read from `request.cf` once, and only
 *   when asked) goes with each Analytics Engine point
 * @param degradedBy - the degrading rule's check, when the request was degraded, not refused
 */
export function observe(
  c: Context<LimiterEnv>,
  namespace: LimiterNamespace,
  checks: readonly Check[],
  charged: Charged,
  where: { readonly country?: string | undefined },
  degradedBy?: Check
): void {
  const env = c.env
  const settings = readSettings(env)
  if (settings.metrics === 'off') return
  const nowMs = Date.now()
  const live = env?.LIMITER_STATS !== undefined
  const dataset = env?.RATE_LIMIT_METRICS
  // Points are written only where a dataset is bound: without one, no event is gathered.
  const events: MetricEvent[] | undefined = dataset ? [] : undefined
  const alerts: Exclude<Alert, { event: 'alerts-suppressed' }>[] = []
  for (const { check, decision } of perRule(charged.decisions)) {
    const { rule } = check
    if (decision.allowed) {
      events?.push({ check, decision, outcome: 'allowed' })
      if (live) liveTally.count(rule.id, 'allowed', nowMs)
      if (crossesNearLimit(check, decision, nowMs)) {
        events?.push({ check, decision, outcome: 'near-limit' })
        alerts.push({ event: 'near-limit', check, decision })
      }
      continue
    }
    if (check.shadow) {
      events?.push({ check, decision, outcome: 'shadow-limited' })
      if (live) liveTally.count(rule.id, 'shadowLimited', nowMs)
      continue
    }
    if (degradedBy) {
      events?.push({ check, decision, outcome: 'degraded' })
      if (live) liveTally.count(rule.id, 'degraded', nowMs)
      continue
    }
    events?.push({ check, decision, outcome: 'limited' })
    if (live) {
      liveTally.count(rule.id, 'limited', nowMs)
      liveTally.limited(rule.id, check.key, !rule.showKeys, nowMs + decision.retryAfterMs, nowMs)
    }
    const minute = minuteOf(nowMs)
    if (burstsLimits(check, settings.limitedBurstKeys, minute))
      alerts.push({ event: 'limited-burst', check, keys: settings.limitedBurstKeys + 1, minute })
  }
  if (events && charged.unenforced.length > 0)
    for (const check of checks)
      if (charged.unenforced.includes(check.rule.id)) events.push({ check, outcome: 'fail-open' })
  for (const { check } of charged.failedClosed) events?.push({ check, outcome: 'fail-closed' })

  const hasher = () => keyHasher(env?.KEY_HASH_SECRET, namespace)
  if (dataset && events && events.length > 0) {
    waitUntil(c, writeMetrics(dataset, events, where.country ?? '', hasher()))
  }
  const webhookUrl = settings.alertWebhookUrl
  alertDesk.tick(nowMs, webhookUrl)
  for (const alert of alerts) {
    const logged = alertDesk.take(alert, nowMs, hasher(), webhookUrl)
    if (logged) waitUntil(c, logged)
  }
  // At most one webhook POST per request, whatever it raised: the queue drains with traffic.
  const posted = alertDesk.queued > 0 ? alertDesk.sendOne(hasher()) : undefined
  if (posted) waitUntil(c, posted)
  if (live && flushDue(nowMs, settings.liveFlushMs))
    waitUntil(c, flushLive(env.LIMITER_STATS!, hasher()))
}

/**
 * One decision per rule: a `maxInFlight` slot is part of its rule's decision, and stands for it
 * only when it alone refused the request.
 */
function perRule(decisions: readonly RuleDecision[]): readonly RuleDecision[] {
  // Most requests hold no slot: their decisions are one per rule already.
  if (!decisions.some(({ check }) => check.inFlight)) return decisions
  return decisions.flatMap((item) => {
    if (item.check.inFlight) return []
    const slot = decisions.find(({ check }) => check.inFlight && check.rule === item.check.rule)
    return slot && !slot.decision.allowed && item.decision.allowed ? [slot] : [item]
  })
}
