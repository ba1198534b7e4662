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

/** A request carries something a rule needs in a form it cannot use: a 400, never a free pass. */
export class BadRequestError extends Error {
  override name = 'BadRequestError'
  /** What in the request is wrong (`query:api_key`, `header:x-cost`). */
  readonly field: string
  /** The rule that needed it, once known. */
  readonly rule: string | undefined

  /**
   * @param field - what in the request is wrong
   * @param message - what is wrong with it, for the client
   * @param rule - the rule that needed it
   */
  constructor(field: string, message: string, rule?: string) {
    super(message)
    this.field = field
    this.rule = rule
  }
}
