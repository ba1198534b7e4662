/**
 * @module rules/messages
 * A rule's `messages`: a limit on the messages a client sends over a WebSocket the rule let
 * through, per connection or per limit key, and what happens to one over it.
 */
import * as v from 'valibot'
import type { SlidingWindowPolicy } from '../algorithms'
import type { CheckedMessages, Messages } from './document'
import { duration, named, objectMessage, show, wholeNumber, type Issue } from './schema-parts'

/** The largest message `limit`, as for a rule's own. */
const MAX_MESSAGES = 1_000_000_000

/** `messages` as written; `per` and `onExceed` get their defaults. */
export const MessagesSchema = named<Messages, CheckedMessages>()(
  v.strictObject(
    {
      limit: wholeNumber(MAX_MESSAGES),
      period: duration,
      per: v.optional(
        v.picklist(
          ['connection', 'key'],
          (i: Issue) => `${show(i.input)} is not "connection" or "key"`
        ),
        'connection'
      ),
      onExceed: v.optional(
        v.picklist(['close', 'drop'], (i: Issue) => `${show(i.input)} is not "close" or "drop"`),
        'close'
      ),
    },
    objectMessage('a message limit object')
  )
)

/** A compiled message limit. */
export interface MessageLimit {
  /** `connection`: counted per socket, in the isolate; `key`: per limit key, in its object. */
  per: 'connection' | 'key'
  /** `close`: the socket is closed with 1008; `drop`: the message goes no further. */
  onExceed: 'close' | 'drop'
  /** `limit` messages per `period`, counted as a sliding window. */
  policy: SlidingWindowPolicy
}

/**
 * Compiles a validated `messages`.
 *
 * @param input - the field after validation (period in ms)
 */
export function compileMessages(input: CheckedMessages): MessageLimit {
  const policy: SlidingWindowPolicy = {
    algorithm: 'sliding-window',
    limit: input.limit,
    periodMs: input.period,
  }
  return Object.freeze({
    per: input.per,
    onExceed: input.onExceed,
    policy: Object.freeze(policy),
  })
}

/**
 * The cross-field problem of a rule's `messages`: a rule whose `match.methods` leave out GET
 * never sees an upgrade (RFC 6455 §4.1: the handshake is a GET), so its limit could never apply.
 *
 * @param rule - the validated rule's `messages` and `match`
 * @param at - the rule's path (`rules[2]`)
 */
export function messagesProblems(
  rule: { messages?: unknown; match?: { methods?: readonly string[] } },
  at: string
): string[] {
  if (rule.messages === undefined || !rule.match?.methods) return []
  if (rule.match.methods.includes('GET')) return []
  return [
    `${at}.messages: only a GET request can upgrade to a WebSocket, and match.methods does not list "GET"`,
  ]
}
