/**
 * @module errors
 * The limiter's named errors. Each is caught in exactly one place.
 */

/** A rules document failed validation. Raised at load time, never while serving a request. */
export class RuleConfigError extends Error {
  override name = 'RuleConfigError'
  /** Every problem found, each as `<path>: <message>`. */
  readonly problems: readonly string[]

  /**
   * @param source - where the document came from (`rules.json`, `kv:rules`, …)
   * @param problems - one line per problem, each starting with the path of the bad field
   */
  constructor(source: string, problems: readonly string[]) {
    super(`${source}: invalid rules document:\n  ${problems.join('\n  ')}`)
    this.source = source
    this.problems = problems
  }

  /** Where the document came from. */
  readonly source: string
}

/** Why a Durable Object could not give a decision. */
export type UnavailableReason = 'timeout' | 'overloaded' | 'error'

/** The Durable Object behind a key could not decide in time (timeout, overload, error). */
export class LimiterUnavailableError extends Error {
  override name = 'LimiterUnavailableError'

  /**
   * @param reason - what went wrong
   * @param options - the underlying error, if any
   */
  constructor(
    readonly reason: UnavailableReason,
    options?: { cause?: unknown }
  ) {
    super(`rate limiter unavailable: ${reason}`, options)
  }
}
