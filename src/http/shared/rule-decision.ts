/**
 * @module http/shared/rule-decision
 * The record of a request's decisions, as the request path makes it and observability reads it:
 * one rule's decision ({@link RuleDecision}) and what charging every matched key gave
 * ({@link Charged}).
 */
import type { LimiterUnavailableError } from '../../errors'
import type { Check } from '../../rules'
import type { Decision } from '../../types'

/**
 * One rule's decision for the current request: the plan's check as it was charged, and what
 * the key's Durable Object decided. The one record the headers, the 429 and 504 bodies, the
 * slot release and `c.get('rateLimit')` read.
 */
export interface RuleDecision {
  /** The key charged, under which rule, policy and cost. */
  check: Check
  /** What its Durable Object decided. */
  decision: Decision
}

/** The outcome of charging every matched key, in rule order. */
export interface Charged {
  decisions: RuleDecision[]
  /** Rules that failed open. */
  unenforced: string[]
  /** Rules that failed closed. */
  failedClosed: { check: Check; error: LimiterUnavailableError }[]
}
