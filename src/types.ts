/**
 * @module types
 * The shared vocabulary of the limiter. Types only.
 */

/**
 * What an algorithm decided for one request against one key. Every algorithm returns this,
 * the Durable Object sends it back over RPC, and the headers are computed from it.
 */
export interface Decision {
  /** Whether the request may proceed. */
  allowed: boolean
  /** The quota: the most units the key can hold (requests per window, or bucket capacity). */
  limit: number
  /** Whole units still available after this request (0 when denied or exhausted). */
  remaining: number
  /** Unix time in ms when the key's full quota is available again. */
  resetAtMs: number
  /** When denied: ms until a request of the same cost would be allowed. 0 when allowed. */
  retryAfterMs: number
  /**
   * Ms until more than `remaining` units are available: the `t` of the `RateLimit` header
   * (draft-ietf-httpapi-ratelimit-headers-11). Absent when no more will come (a full quota, a
   * concurrency limit) or the decision cannot tell (a leased rule's local answer).
   */
  moreInMs?: number
  /** A shaper's answer: how long the request waits before it goes to the origin. */
  delayMs?: number
  /** A concurrency limit's slot, to release when the origin's response ends. */
  leaseId?: string
  /**
   * A concurrency limit's denial after the request waited its `maxWait` in the key's queue and
   * no slot came free: answered 504, not 429.
   */
  timedOut?: boolean
}

/**
 * Plain facts about an incoming request: all that rules may look at. Built once per request
 * from the `Request`, so matching and key derivation are pure and testable with literals.
 */
export interface RequestFacts {
  /** Upper-case HTTP method. */
  method: string
  /**
   * The method a method-override header or `_method` parameter names (upper-case, one of the
   * methods rules know), when overrides are counted (`METHOD_OVERRIDE=count`).
   */
  methodOverride?: string
  /** Lower-case host name without port. */
  host: string
  /** Normalised path (see `http/request/facts.ts`). */
  path: string
  /** Query parameters (first value per name). */
  query: URLSearchParams
  /** Request headers (names are case-insensitive). */
  headers: Headers
  /** The client's address (IPv4-mapped IPv6 as IPv4), when known: what lists match. */
  address?: string
  /**
   * The client's address grouped for limiting (IPv4, or IPv6 /64): the `ip` key. `unknown` when
   * `CF-Connecting-IP` is absent or not an address (see `http/request/facts.ts`).
   */
  ip?: string
  /** ISO country code from Cloudflare, when known. */
  country?: string
  /** Autonomous system number from Cloudflare, when known. */
  asn?: number
  /** Claims of the request's JWT, present only when its signature and dates verified. */
  claims?: Record<string, unknown>
}

/** What to do when a key's Durable Object cannot decide: let the request through, or refuse it. */
export type FailMode = 'open' | 'closed'

/** Cloudflare's location hints: where a Durable Object is created, if it does not exist yet. */
export const LOCATION_HINTS = [
  'wnam',
  'enam',
  'sam',
  'weur',
  'eeur',
  'apac',
  'apac-ne',
  'apac-se',
  'oc',
  'afr',
  'me',
] as const

/** A location hint (see {@link LOCATION_HINTS}). */
export type LocationHint = (typeof LOCATION_HINTS)[number]

/** Cloudflare's jurisdictions: where a Durable Object runs and stores its data, always. */
export type Jurisdiction = 'eu' | 'fedramp' | 'fedramp-high' | 'us'

/** Where a rule's Durable Objects are placed. */
export interface Placement {
  /** Where a key's object is created (its first request only: objects do not move). */
  locationHint?: LocationHint
  /** The jurisdiction its objects live in: a different namespace, so different counters. */
  jurisdiction?: Jurisdiction
}
