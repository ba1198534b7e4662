/**
 * @module http/request/auth-failures
 * Bearer checks of the admin API and `/json`, with wrong tokens rate-limited per client address:
 * guessing a token is held to {@link AUTH_FAILURE_POLICY}, counted in the `LIMITER` Durable
 * Objects like any rule, under a rule id no rules document can use.
 */
import type { SlidingLogPolicy } from '../../algorithms'
import { HttpError } from '../../errors'
import { charge, peek, type LimiterNamespace } from '../../limiter/client'
import { bearerToken, tokenMatches } from '../shared/credentials'
import { clientAddress } from './facts'
import { logEvent } from '../../log'

/** The counter's rule id: rule ids start with a letter or digit, so none can collide. */
export const AUTH_FAILURE_RULE = '__auth-failures'

/** At most 10 wrong tokens per client address in any minute. */
export const AUTH_FAILURE_POLICY: SlidingLogPolicy = {
  algorithm: 'sliding-log',
  limit: 10,
  periodMs: 60_000,
}

/** What {@link authorize} checks. */
export interface AuthorizeOptions {
  /** The secret the bearer token must equal. */
  secret: string
  /** Its name, for the 401's message. */
  name: 'ADMIN_TOKEN' | 'DECISION_TOKEN'
  /** Where failures are counted. */
  namespace: LimiterNamespace
  /** The longest wait for the counter. */
  timeoutMs: number
  /**
   * Ask the counter before admitting even a right token (the admin API), so a client locked out
   * cannot learn which guess was right. Without it (`/json`, where one more round trip per call
   * would double the load on a busy caller's object) only addresses this isolate saw reach the
   * limit are refused outright.
   */
  strict: boolean
}

// Addresses seen at the limit, and until when (Unix ms); bounded, as any client can fill it.
const lockedUntil = new Map<string, number>()

/**
 * Lets in a request with the right bearer token; throws the 401 or 429 that refuses any other.
 * A wrong token is counted against the client's address (`CF-Connecting-IP`, IPv6 by /64;
 * requests without one share a counter); once 10 fail within a minute, attempts from that
 * address are answered 429 with `Retry-After` for up to a minute after the last failure. A
 * right token is never counted. If the counter cannot answer, tokens are still checked.
 *
 * @param request - the incoming request
 * @param options - the secret and where to count
 * @throws {HttpError} 401 without the right token, 429 from an address with too many wrong ones
 */
export async function authorize(request: Request, options: AuthorizeOptions): Promise<void> {
  const presented = bearerToken(request.headers.get('authorization'))
  if (presented === '') throw unauthorized(options.name)
  const address = clientAddress(request.headers.get('cf-connecting-ip')) ?? 'unknown'
  const call = {
    rule: { id: AUTH_FAILURE_RULE },
    key: `${AUTH_FAILURE_RULE}|${encodeURIComponent(address)}`,
    policy: AUTH_FAILURE_POLICY,
  }
  const now = Date.now()
  const until = lockedUntil.get(call.key) ?? 0
  if (until > now) throw tooManyFailures(until - now)
  if (options.strict) {
    const state = await peek(options.namespace, call, options.timeoutMs).catch(() => undefined)
    if (state && state.remaining === 0) throw tooManyFailures(remember(call.key, state.resetAtMs))
  }
  if (await tokenMatches(presented, options.secret)) return
  const result = await charge(
    options.namespace,
    { ...call, cost: 1, failMode: 'open' },
    options.timeoutMs
  )
  if (result.enforced) {
    const { decision } = result
    if (decision.remaining === 0) {
      const waitMs = remember(call.key, decision.resetAtMs)
      if (!decision.allowed) throw tooManyFailures(waitMs)
      logEvent('warn', 'auth-failures-exceeded', { address, waitMs })
    }
  }
  throw unauthorized(options.name)
}

/** Notes a locked address until `untilMs`; returns the wait from now. */
function remember(key: string, untilMs: number): number {
  if (lockedUntil.size >= 10_000) lockedUntil.clear()
  lockedUntil.set(key, untilMs)
  return untilMs - Date.now()
}

function unauthorized(name: string): HttpError {
  return new HttpError(
    401,
    'Unauthorized',
    `A valid "Authorization: Bearer <${name}>" is required.`,
    { headers: { 'WWW-Authenticate': 'Bearer realm="rate limiter"' } }
  )
}

function tooManyFailures(waitMs: number): HttpError {
  const seconds = String(Math.max(1, Math.ceil(waitMs / 1000)))
  return new HttpError(
    429,
    'Too Many Requests',
    'Too many wrong tokens from this address; try again later.',
    { headers: { 'Retry-After': seconds } }
  )
}
