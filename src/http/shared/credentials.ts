/**
 * @module http/shared/credentials
 * The limiter's own secrets: `ADMIN_TOKEN` (the admin API) and `DECISION_TOKEN` (`/json`).
 * Presented tokens are compared in constant time, and a request carrying either secret is never
 * sent on to the origin.
 */
import { HttpError } from '../../errors'
import { logEvent } from '../../log'

/** The Worker secrets the limiter's own endpoints take as bearer tokens. */
export interface SecretVars {
  /** Enables the admin API. */
  ADMIN_TOKEN?: string
  /** Enables `POST /json` (envoyproxy/ratelimit's decision endpoint). */
  DECISION_TOKEN?: string
  /**
   * Keys the hash that hidden limit keys are shown as (see `../observe/key-hash.ts`); without it,
   * a secret derived from the `LIMITER` namespace.
   */
  KEY_HASH_SECRET?: string
}

const encoder = new TextEncoder()
// A secret's digest is computed once per isolate: secrets are few and live as long as it.
const secretDigests = new Map<string, Promise<ArrayBuffer>>()

function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest('SHA-256', encoder.encode(text))
}

function secretDigest(secret: string): Promise<ArrayBuffer> {
  let found = secretDigests.get(secret)
  if (!found) {
    if (secretDigests.size >= 8) secretDigests.clear()
    found = digest(secret)
    secretDigests.set(secret, found)
  }
  return found
}

/**
 * The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or `""`.
 *
 * @param header - the header's value
 */
export function bearerToken(header: string | null | undefined): string {
  return header?.match(/^Bearer\s+(.+)$/i)?.[1] ?? ''
}

/**
 * Whether a presented token equals a secret, in constant time: both are hashed first, so
 * neither their contents nor their lengths show in the timing. An empty token never matches.
 *
 * @param presented - the token the request carries
 * @param secret - the configured secret
 */
export async function tokenMatches(presented: string, secret: string): Promise<boolean> {
  if (presented === '' || secret === '') return false
  const [a, b] = await Promise.all([digest(presented), secretDigest(secret)])
  return crypto.subtle.timingSafeEqual(a, b)
}

/**
 * Whether a request's `Authorization` carries one of the limiter's secrets as a bearer token
 * (any item of a repeated header). Costs nothing when no secret is set or the request has no
 * `Authorization`; otherwise one SHA-256 per bearer token.
 *
 * @param headers - the request's headers
 * @param env - where the secrets are
 */
export function carriesLimiterSecret(
  headers: Headers,
  env: SecretVars | undefined
): boolean | Promise<boolean> {
  // Answered without a promise when there is nothing to compare: nearly every request.
  if (!env?.ADMIN_TOKEN && !env?.DECISION_TOKEN) return false
  const header = headers.get('authorization')
  if (header === null) return false
  return carriesSecret(header, env)
}

async function carriesSecret(header: string, env: SecretVars): Promise<boolean> {
  const secrets = [env.ADMIN_TOKEN, env.DECISION_TOKEN].filter((s): s is string => !!s)
  for (const item of header.split(',')) {
    const token = bearerToken(item.trim())
    if (token === '') continue
    const presented = await digest(token)
    for (const secret of secrets) {
      if (crypto.subtle.timingSafeEqual(presented, await secretDigest(secret))) return true
    }
  }
  return false
}

/**
 * The 400 for a request that would have taken one of the limiter's secrets to the origin, to
 * throw. The token is not echoed; the event is logged without it.
 */
export function secretRefused(): HttpError {
  logEvent('warn', 'limiter-secret-refused')
  return new HttpError(
    400,
    'Bad Request',
    "The request carries one of the rate limiter's own credentials; it is not sent on."
  )
}
