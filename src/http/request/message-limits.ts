/**
 * @module http/request/message-limits
 * The message limits of a relayed WebSocket (rules' `messages`): each message the client sends
 * is counted under the limit of every rule that let the upgrade through, per connection here or
 * per key through its object (`limiter/message-budget.ts`), then forwarded, dropped with a
 * notice, or the socket closed with 1008.
 */
import {
  countMessage,
  messageOutcome,
  noticeDue,
  type LimitVerdict,
  type MessageOutcome,
} from '../../algorithms/messages'
import type { SlidingWindowState } from '../../algorithms'
import { LimiterUnavailableError } from '../../errors'
import type { ChargeResult, LimiterNamespace } from '../../limiter/client'
import { openMessageBudget, type MessageBudget } from '../../limiter/message-budget'
import type { Check } from '../../rules'
import type { MessageLimit } from '../../rules/messages'
import { logEvent } from '../../log'

/** What becomes of the client's next message. */
export type Verdict =
  | { action: 'forward' }
  /** Not forwarded; `notice` goes back to the client, when one is due. */
  | { action: 'drop'; notice?: string }
  /** The socket is closed, both ways, with 1008 and `reason`. */
  | { action: 'close'; reason: string }

/** A connection's message limits, as the relay (`websocket.ts`) uses them. */
export interface MessageGate {
  /** Counts the client's next message under every limit. */
  admit(): Verdict | Promise<Verdict>
  /** The connection is over: per-key units go back, and what was refused is logged once. */
  end(): void
}

/** The wait a message gets when its key fails closed and no decision could be had (ms). */
const UNDECIDED_RETRY_MS = 1_000

/** One rule's limit on this connection. */
interface Counter {
  check: Check
  limit: MessageLimit
  /** `per: "connection"`: the count so far. */
  window?: SlidingWindowState
  /** `per: "key"`: the key's shared budget. */
  budget?: MessageBudget
  lastNoticeMs?: number
}

/**
 * The message limits of a connection the `checks` let through, or `undefined` when none of
 * their rules limits messages.
 *
 * @param namespace - the `LIMITER` binding
 * @param checks - the upgrade request's checks
 * @param timeoutMs - the longest wait for a per-key reservation
 * @param now - the clock (ms)
 */
export function messageGate(
  namespace: LimiterNamespace,
  checks: readonly Check[],
  timeoutMs: number,
  now: () => number = () => Date.now()
): MessageGate | undefined {
  const counters: Counter[] = []
  for (const check of checks) {
    const limit = check.rule.messages
    if (!limit) continue
    const counter: Counter = { check, limit }
    if (limit.per === 'key') {
      const { rule, key, failMode } = check
      counter.budget = openMessageBudget(
        namespace,
        { rule, key, policy: limit.policy, failMode },
        timeoutMs
      )
    }
    counters.push(counter)
  }
  if (counters.length === 0) return undefined
  const dropped: Record<string, number> = {}
  const wouldLimit: Record<string, number> = {}
  let closedBy: string | undefined

  const verdictOf = (outcome: MessageOutcome, nowMs: number): Verdict => {
    for (const id of outcome.wouldLimit) wouldLimit[id] = (wouldLimit[id] ?? 0) + 1
    if (outcome.action === 'forward') return { action: 'forward' }
    const { ruleId } = outcome
    if (outcome.action === 'close') {
      closedBy = ruleId
      // A close reason is at most 123 bytes; a rule id is at most 64 ASCII characters.
      return { action: 'close', reason: `rate limit exceeded: ${ruleId}` }
    }
    dropped[ruleId] = (dropped[ruleId] ?? 0) + 1
    const counter = counters.find(({ check }) => check.rule.id === ruleId)!
    if (!noticeDue(counter.lastNoticeMs, counter.limit.policy, nowMs)) return { action: 'drop' }
    counter.lastNoticeMs = nowMs
    const { retryAfterMs } = outcome
    return {
      action: 'drop',
      notice: JSON.stringify({ error: 'rate-limited', rule: ruleId, retryAfterMs }),
    }
  }

  return {
    admit() {
      const nowMs = now()
      const verdicts = counters.map((counter) => count(counter, nowMs))
      if (verdicts.every((v): v is LimitVerdict => !(v instanceof Promise)))
        return verdictOf(messageOutcome(verdicts), nowMs)
      return Promise.all(verdicts).then((all) => verdictOf(messageOutcome(all), nowMs))
    },
    end() {
      for (const { budget } of counters) budget?.close()
      const shadowed = Object.keys(wouldLimit).length > 0
      if (closedBy === undefined && Object.keys(dropped).length === 0 && !shadowed) return
      logEvent('warn', 'websocket-messages-limited', {
        dropped,
        ...(closedBy !== undefined ? { closedBy } : {}),
        ...(shadowed ? { wouldLimit } : {}),
      })
    },
  }
}

/** One limit's verdict on a message: here for a connection, from the key's budget otherwise. */
function count(counter: Counter, nowMs: number): LimitVerdict | Promise<LimitVerdict> {
  const { check, limit } = counter
  const verdict = (decision: LimitVerdict['decision']): LimitVerdict => ({
    ruleId: check.rule.id,
    onExceed: limit.onExceed,
    shadow: check.shadow,
    decision,
  })
  if (!counter.budget) {
    const { state, decision } = countMessage(counter.window, limit.policy, nowMs)
    counter.window = state
    return verdict(decision)
  }
  const spent = (result: ChargeResult): LimitVerdict =>
    verdict(result.enforced ? result.decision : { allowed: true, retryAfterMs: 0 })
  const result = counter.budget.spend()
  if (!(result instanceof Promise)) return spent(result)
  return result.then(spent, (error: unknown) => {
    // Thrown only for a key that fails closed: its message is refused as over the limit.
    if (!(error instanceof LimiterUnavailableError)) throw error
    return verdict({ allowed: false, retryAfterMs: UNDECIDED_RETRY_MS })
  })
}
