/**
 * @module client/fetch-with-rate-limit
 * `fetch`, retried on 429 and 503 after the wait the server asked for, with jitter. It uses
 * only `fetch`, `setTimeout`, `AbortSignal` and `Headers`, so it runs in Workers, Node 20+ and
 * browsers alike.
 */
import { serverHint, type HintSource } from './server-hint'
import { DEFAULT_BACKOFF, waitMs } from './wait'

/** One wait before a retry. */
export interface RateLimitWait {
  /** Which request got the answer that was retried: 1 for the first. */
  attempt: number
  /** That answer's status: 429 or 503. */
  status: number
  /** How long the client waited before the next request (ms). */
  waitMs: number
  /** What the wait was based on: `Retry-After`, the `RateLimit` header's `t`, or backoff alone. */
  hint: HintSource
}

/** What {@link fetchWithRateLimit} resolves to. */
export interface RateLimitResult {
  /** The last response: a success, an error that is not retried, or the last 429 or 503. */
  response: Response
  /** Every wait, in order; empty when the first answer was kept. */
  waits: RateLimitWait[]
}

/** Options of {@link fetchWithRateLimit}; all are optional. */
export interface FetchWithRateLimitOptions {
  /** Retries after the first request, at most. @default 3 */
  maxRetries?: number
  /**
   * The most the waits may add up to (ms). A wait that would go past what is left is not
   * made: the response that asked for it is returned. @default 60_000
   */
  maxWaitMs?: number
  /** The first retry's backoff when the server gives no hint (ms), doubled each retry. @default 500 */
  baseDelayMs?: number
  /** The backoff never grows past this (ms). @default 20_000 */
  maxBackoffMs?: number
  /**
   * Aborts the request and any wait; the promise then rejects with `signal.reason`. Takes the
   * place of `init.signal` (which, or the `Request`'s, is used when this is not given).
   */
  signal?: AbortSignal
  /**
   * Retry methods that are not idempotent (POST, PATCH, …) too. Only do so when the server
   * cannot have acted on a refused request, as with a limiter in front of it. @default false
   */
  retryNonIdempotent?: boolean
  /** The `fetch` to call. @default globalThis.fetch */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  /** Waits `ms`, rejecting with `signal.reason` if it aborts. @default a `setTimeout` */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** A number in [0, 1) for the jitter. @default Math.random */
  random?: () => number
  /** The current time (Unix ms), for `Retry-After` dates when the response has no `Date`. @default Date.now */
  now?: () => number
}

/** RFC 9110 section 9.2.2. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])
const RETRIED_STATUSES = new Set([429, 503])

/**
 * Fetches, and on a 429 or 503 waits and tries again, up to `maxRetries` times.
 *
 * The wait is the server's: `Retry-After` (seconds or an HTTP date), else the largest `t` of
 * the policies the `RateLimit` header says are exhausted. A little jitter is added on top (up
 * to the hint again, at most the backoff), so clients told the same time do not all return in
 * the same instant; a wait is never shorter than the server asked. Without a hint the wait is
 * `random * min(maxBackoffMs, baseDelayMs * 2^retry)`.
 *
 * Not retried: other statuses, network errors (they reject, as with `fetch`), methods that are
 * not idempotent (unless `retryNonIdempotent`), and bodies that cannot be sent twice (a
 * `ReadableStream` in `init.body`). A `Request` is cloned before every attempt, so its body
 * goes each time.
 *
 * It resolves to the response and the waits it made, rather than taking an `onRetry`
 * callback: one awaited value says both what came back and what it cost, logging or metrics
 * read it afterwards, and there is no callback whose errors or timing need defining.
 *
 * @param input - what `fetch` takes: a URL or a `Request`
 * @param init - what `fetch` takes
 * @param options - retries, budget, abort signal, and the test seams
 * @returns the last response, and the waits before it
 * @throws whatever `fetch` throws; `signal.reason` if the signal aborts; a `RangeError` for
 *   a negative number or a `maxRetries` that is not whole
 * @example
 * ```ts
 * import { fetchWithRateLimit } from 'edge-rate-limiter/client'
 *
 * const { response, waits } = await fetchWithRateLimit('https://api.example.com/items', undefined, {
 *   maxWaitMs: 10_000,
 * })
 * if (response.status === 429) console.warn(`still limited after ${waits.length} retries`)
 * ```
 */
export async function fetchWithRateLimit(
  input: string | URL | Request,
  init?: RequestInit,
  options: FetchWithRateLimitOptions = {}
): Promise<RateLimitResult> {
  const {
    maxRetries = 3,
    maxWaitMs = 60_000,
    baseDelayMs = DEFAULT_BACKOFF.baseDelayMs,
    maxBackoffMs = DEFAULT_BACKOFF.maxBackoffMs,
    retryNonIdempotent = false,
    fetch: send = (input, init) => fetch(input, init),
    sleep = abortableSleep,
    random = Math.random,
    now = Date.now,
  } = options
  checkOptions({ maxRetries, maxWaitMs, baseDelayMs, maxBackoffMs })
  const request = isRequest(input) ? input : undefined
  const signal = options.signal ?? init?.signal ?? request?.signal
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase()
  const retries =
    (retryNonIdempotent || IDEMPOTENT.has(method)) && !isStream(init?.body) ? maxRetries : 0
  const sendInit = options.signal === undefined ? init : { ...init, signal: options.signal }
  const waits: RateLimitWait[] = []
  let budgetMs = maxWaitMs
  for (let attempt = 1; ; attempt++) {
    const response = await send(request ? request.clone() : input, sendInit)
    if (!RETRIED_STATUSES.has(response.status) || attempt > retries) return { response, waits }
    const hint = serverHint(response.headers, now())
    const wait = waitMs(hint?.ms, attempt - 1, random(), { baseDelayMs, maxBackoffMs })
    if (wait > budgetMs) return { response, waits }
    budgetMs -= wait
    waits.push({ attempt, status: response.status, waitMs: wait, hint: hint?.source ?? 'backoff' })
    // The refused answer is not read: free its connection now rather than when it is collected.
    void response.body?.cancel().catch(() => {})
    await sleep(wait, signal)
  }
}

/** Wrong numbers are a mistake in the calling code: said at once, not turned into odd waits. */
function checkOptions(options: Record<string, number>): void {
  for (const [name, value] of Object.entries(options)) {
    const fits = name === 'maxRetries' ? Number.isInteger(value) && value >= 0 : value >= 0
    if (!fits) throw new RangeError(`fetchWithRateLimit(): ${name} must be 0 or more, not ${value}`)
  }
}

/** A `Request` (also one from another realm or polyfill, hence no `instanceof`). */
function isRequest(input: string | URL | Request): input is Request {
  return typeof input === 'object' && 'clone' in input && 'method' in input
}

/** A body that is read as it is sent, so it cannot be sent a second time. */
function isStream(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  return 'getReader' in body || Symbol.asyncIterator in body
}

/**
 * Waits `ms`, or rejects with the signal's reason as soon as it aborts.
 *
 * @param ms - how long
 * @param signal - cuts the wait short
 */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
