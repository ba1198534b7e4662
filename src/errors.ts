/**
 * @module errors
 * The limiter's named errors. Each is caught in exactly one place.
 */

/** A rules document failed validation. Raised at load time, never while serving a request. */
export class RuleConfigError extends Error {
  override name = 'RuleConfigError'
  /** Where the document came from (`rules.json`, `kv:rules`, …). */
  readonly source: string
  /** Every problem found, each as `<path>: <message>`. */
  readonly problems: readonly string[]

  /**
   * @param source - where the document came from
   * @param problems - one line per problem, each starting with the path of the bad field
   */
  constructor(source: string, problems: readonly string[]) {
    super(`${source}: invalid rules document:\n  ${problems.join('\n  ')}`)
    this.source = source
    this.problems = problems
  }
}

/** Why a Durable Object could not give a decision. */
export type UnavailableReason = 'timeout' | 'overloaded' | 'error'

/** The Durable Object behind a key could not decide in time (timeout, overload, error). */
export class LimiterUnavailableError extends Error {
  override name = 'LimiterUnavailableError'
  /** What went wrong. */
  readonly reason: UnavailableReason

  /**
   * @param reason - what went wrong
   * @param options - the underlying error, if any
   */
  constructor(reason: UnavailableReason, options?: { cause?: unknown }) {
    super(`rate limiter unavailable: ${reason}`, options)
    this.reason = reason
  }
}

/** A request carries a key part in a form that cannot name one counter (e.g. a repeated query parameter). */
export class UnusableKeyError extends Error {
  override name = 'UnusableKeyError'
  /** The key part, as written in the rule (`query:api_key`). */
  readonly part: string

  /**
   * @param part - the key part
   * @param message - what is wrong with the request's value for it
   */
  constructor(part: string, message: string) {
    super(message)
    this.part = part
  }
}
