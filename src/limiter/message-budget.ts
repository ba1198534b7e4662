/**
 * @module limiter/message-budget
 * A limit key's WebSocket message budget (a rule's `messages` with `"per": "key"`), shared by
 * every connection of the key: counted by an object of its own, named and placed like the
 * key's ({@link messagesKey}), so messages never mix with the rule's request count. Messages
 * are spent from units leased in batches (`leases.ts`): most need no call, and the object never
 * admits more than the limit per window. A key's units go back when its last connection in the
 * isolate closes.
 */
import type { SlidingWindowPolicy } from '../algorithms'
import type { FailMode, Placement } from '../types'
import type { ChargeResult } from './calls/charge-call'
import type { LimiterNamespace } from './limiter-namespace'
import { isolateLeases, type LeaseBook } from './leased/leases'

/**
 * Appended to a limit key to name its messages object. Key values are percent-encoded and rule
 * ids hold no `#`, so no request key ends like this (a digest name has `|#` and 43 more
 * characters).
 */
const MESSAGES_SUFFIX = '|#messages'

/**
 * The name under which a limit key's messages are counted.
 *
 * @param key - the rule's limit key (`rules/key.ts`)
 */
export function messagesKey(key: string): string {
  return `${key}${MESSAGES_SUFFIX}`
}

/** The key whose messages to count. */
export interface MessageBudgetRef {
  rule: { readonly id: string; readonly placement?: Placement }
  /** The rule's limit key, as for its requests. */
  key: string
  /** The message limit. */
  policy: SlidingWindowPolicy
  /** What a message gets when no units can be had. */
  failMode: FailMode
}

/** One connection's hold on its key's budget. */
export interface MessageBudget {
  /**
   * Spends one message. `enforced: false` when the object could not decide and the key fails
   * open. A message decided from the units held comes back as it is, not in a promise.
   *
   * @throws {LimiterUnavailableError} when it could not decide and the key fails closed
   */
  spend(): ChargeResult | Promise<ChargeResult>
  /** The connection is over; the key's last one here hands its unspent units back. */
  close(): void
}

/** Connections per messages key, per book (tests make books standing in for isolates). */
const openCounts = new WeakMap<LeaseBook, Map<string, number>>()

/**
 * Opens a connection's hold on a key's message budget.
 *
 * @param namespace - the `LIMITER` binding
 * @param ref - the rule, limit key, message limit and fail mode
 * @param timeoutMs - the longest wait for a reservation
 * @param book - the isolate's lease book (tests pass their own)
 */
export function openMessageBudget(
  namespace: LimiterNamespace,
  ref: MessageBudgetRef,
  timeoutMs: number,
  book: LeaseBook = isolateLeases()
): MessageBudget {
  const key = messagesKey(ref.key)
  const call = { ...ref, key, cost: 1, consistency: 'leased' as const }
  let counts = openCounts.get(book)
  if (!counts) openCounts.set(book, (counts = new Map()))
  counts.set(key, (counts.get(key) ?? 0) + 1)
  let open = true
  return {
    spend: () => book.charge(namespace, call, timeoutMs),
    close() {
      if (!open) return
      open = false
      const left = counts.get(key)! - 1
      if (left > 0) return void counts.set(key, left)
      counts.delete(key)
      book.release(ref.rule.id, key)
    },
  }
}
