/**
 * @module algorithms/messages
 * Message limits of one WebSocket connection, as pure functions of explicit time: a limit
 * counted per connection (the sliding-window counter, one state per connection and limit, a
 * message costing 1), the pacing of drop notices, and what several limits decide together.
 */
import type { Decision } from '../types'
import { slidingWindow, type SlidingWindowState } from './sliding-window'
import type { Outcome, SlidingWindowPolicy } from './types'

/** What happens to a message over a limit. */
export type OnExceed = 'close' | 'drop'

/**
 * Counts one message of a connection under a limit: allowed while at most `limit` fall in the
 * sliding window of `periodMs`; a message over it is not counted.
 *
 * @param state - the connection's count so far (`undefined` before its first message)
 * @param policy - the limit
 * @param nowMs - when the message arrived
 */
export function countMessage(
  state: SlidingWindowState | undefined,
  policy: SlidingWindowPolicy,
  nowMs: number
): Outcome<SlidingWindowState> {
  return slidingWindow.charge(state, policy, nowMs, 1)
}

/**
 * Whether a connection may be told of a dropped message now: at most once per `periodMs` of
 * the limit that dropped it, so a client flooding the socket is not flooded back.
 *
 * @param lastNoticeMs - when it was last told under this limit, if ever
 * @param policy - the limit
 * @param nowMs - now
 */
export function noticeDue(
  lastNoticeMs: number | undefined,
  policy: SlidingWindowPolicy,
  nowMs: number
): boolean {
  return lastNoticeMs === undefined || nowMs - lastNoticeMs >= policy.periodMs
}

/** One limit's decision on a message. */
export interface LimitVerdict {
  /** The rule whose limit it is. */
  ruleId: string
  onExceed: OnExceed
  /** A rule in shadow: its denial is reported, never acted on. */
  shadow: boolean
  decision: Pick<Decision, 'allowed' | 'retryAfterMs'>
}

/** What becomes of a message. `wouldLimit`: rules in shadow that would have refused it. */
export type MessageOutcome =
  | { action: 'forward'; wouldLimit: string[] }
  | { action: 'drop'; ruleId: string; retryAfterMs: number; wouldLimit: string[] }
  | { action: 'close'; ruleId: string; wouldLimit: string[] }

/**
 * The outcome of a message under every limit that counted it: the strictest wins. A close
 * (the first such rule) beats a drop; among drops, the rule with the longest wait names it.
 *
 * @param verdicts - each limit's decision, in rule order
 */
export function messageOutcome(verdicts: readonly LimitVerdict[]): MessageOutcome {
  const wouldLimit: string[] = []
  let close: LimitVerdict | undefined
  let drop: LimitVerdict | undefined
  for (const verdict of verdicts) {
    if (verdict.decision.allowed) continue
    if (verdict.shadow) wouldLimit.push(verdict.ruleId)
    else if (verdict.onExceed === 'close') close ??= verdict
    else if (!drop || verdict.decision.retryAfterMs > drop.decision.retryAfterMs) drop = verdict
  }
  if (close) return { action: 'close', ruleId: close.ruleId, wouldLimit }
  if (drop) {
    const { ruleId, decision } = drop
    return { action: 'drop', ruleId, retryAfterMs: decision.retryAfterMs, wouldLimit }
  }
  return { action: 'forward', wouldLimit }
}
