/**
 * @module errors
 * The limiter's named errors, and the one way an error becomes a response.
 *
 * An {@link HttpError} is thrown where the problem is found and knows its response
 * (`getResponse()`, RFC 9457 problem details). It is answered in one place: the Worker's
 * `app.onError` (`src/app.ts`). The `rateLimit` middleware answers its own (a 400) the same
 * way, so a library user's app needs no error handler for them. Anything else that reaches
 * `app.onError` is an internal error: a logged 503.
 *
 * Some code catches an error on purpose to do something else than answer it: a rule in shadow
 * skips a request it cannot read (`rules/plan.ts`), an invalid rules document in KV is refused
 * while the rules in force stay (`provider/rules-source.ts`), a key that fails open lets the
 * request through (`limiter/client.ts`), keys that fail closed are gathered into one 503
 * (`http/request/charge.ts`), `POST /explain` describes the 400 a request would get
 * (`http/admin/explain.ts`). Those catches say so where they are.
 */

/** The members of an RFC 9457 problem details body; extension members may be added. */
export interface Problem {
  type?: string
  title: string
  status: number
  detail: string
  [extension: string]: unknown
}

/** Every problem response's own headers: set last, so no caller's can replace them. */
const PROBLEM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/problem+json',
  'cache-control': 'no-store',
}

/**
 * An `application/problem+json` response: the one place such a body is written.
 *
 * @param problem - the body; `status` is also the response status
 * @param headers - extra headers, by lower-case or any name but `content-type`/`cache-control`
 */
export function problemResponse(
  problem: Problem,
  headers?: Readonly<Record<string, string>>
): Response {
  // One record for the constructor: workerd converts it in one pass, where setting a header
  // on the made response is a call of its own (a blocked flood makes one per request).
  return new Response(JSON.stringify({ type: 'about:blank', ...problem }), {
    status: problem.status,
    headers: headers ? { ...headers, ...PROBLEM_HEADERS } : PROBLEM_HEADERS,
  })
}

/** How an {@link HttpError} is answered beyond its status, title and detail. */
export interface HttpErrorInit {
  /** The problem type URI. @default 'about:blank' */
  type?: string
  /** Extension members of the body. */
  extensions?: Readonly<Record<string, unknown>>
  /** Extra response headers (`Allow`, `Retry-After`, `WWW-Authenticate`). */
  headers?: Readonly<Record<string, string>>
  /** The error's message, when it differs from the detail the client reads. */
  message?: string
  /** The underlying error. */
  cause?: unknown
}

/** A request that ends in an error response: thrown where found, answered by `getResponse()`. */
export class HttpError extends Error {
  override name = 'HttpError'
  /** The response status. */
  readonly status: number
  /** The problem's title (the status's reason phrase). */
  readonly title: string
  /** What went wrong, for the client. */
  readonly detail: string
  readonly #init: HttpErrorInit

  /**
   * @param status - the response status
   * @param title - its reason phrase
   * @param detail - what went wrong, for the client
   * @param init - type, extension members, headers, message, cause
   */
  constructor(status: number, title: string, detail: string, init: HttpErrorInit = {}) {
    super(init.message ?? detail, init.cause === undefined ? undefined : { cause: init.cause })
    this.status = status
    this.title = title
    this.detail = detail
    this.#init = init
  }

  /** The problem+json response for this error. */
  getResponse(): Response {
    const { type, extensions, headers } = this.#init
    return problemResponse(
      {
        ...(type === undefined ? {} : { type }),
        title: this.title,
        status: this.status,
        detail: this.detail,
        ...extensions,
      },
      headers
    )
  }
}

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

/**
 * The Durable Object behind a key could not decide in time (timeout, overload, error). Where
 * nothing else is done with it (the admin API, `/json`) it is a 503.
 */
export class LimiterUnavailableError extends HttpError {
  override name = 'LimiterUnavailableError'
  /** What went wrong. */
  readonly reason: UnavailableReason

  /**
   * @param reason - what went wrong
   * @param options - the underlying error, if any
   */
  constructor(reason: UnavailableReason, options?: { cause?: unknown }) {
    super(503, 'Service Unavailable', `The key's Durable Object could not answer (${reason}).`, {
      message: `rate limiter unavailable: ${reason}`,
      cause: options?.cause,
    })
    this.reason = reason
  }
}

/** A request carries something a rule needs in a form it cannot use: a 400, never a free pass. */
export class BadRequestError extends HttpError {
  override name = 'BadRequestError'
  /** What in the request is wrong (`query:api_key`, `header:x-cost`). */
  readonly field: string
  /** The rule that needed it, once known. */
  readonly rule: string | undefined

  /**
   * @param field - what in the request is wrong
   * @param message - what is wrong with it, for the client
   * @param rule - the rule that needed it (the detail then names it and the field)
   */
  constructor(field: string, message: string, rule?: string) {
    super(
      400,
      'Bad Request',
      rule === undefined ? message : `${message} Rule "${rule}" reads ${field}.`,
      { message, ...(rule === undefined ? {} : { extensions: { rule } }) }
    )
    this.field = field
    this.rule = rule
  }
}
