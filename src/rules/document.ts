/**
 * @module rules/document
 * The rules document as named types: as written (`RulesDocument`, what `rules.json`, a KV value
 * or a library user's object holds) and as validation leaves it (`CheckedRulesDocument`:
 * durations in ms, defaults filled in). Types only. The schemas in `schema.ts` and its parts are
 * declared with these types through `named()`, which makes tsc refuse any difference between a
 * schema and its types in either direction, so the two cannot drift apart; and the package's
 * declarations name these types instead of spelling out the schema's inferred ones.
 */
import type { FailMode, Jurisdiction, LocationHint } from '../types'
import type { KeyMaterial } from './public-key'

/** `"500ms"`, `"10s"`, `"1m"`, `"1h"`, `"1d"`, or a number of seconds; at most 365 days. */
export type Duration = string | number

/** One item or a non-empty list of them. */
type OneOrMany<T> = T | T[]

/** Which requests a rule applies to; every condition given must hold. */
export interface Match {
  /** Path patterns, `*` matching any run of characters (`/api/*`). */
  path?: OneOrMany<string>
  methods?: string[]
  /** Host patterns (`*.example.com`). */
  host?: OneOrMany<string>
  /** Header name → the values it must have one of. */
  headers?: Record<string, string[]>
  /** Query parameter name → the values it must have one of. */
  query?: Record<string, string[]>
  caseSensitive?: boolean
}

/** Units a request takes: a whole number, or read from a request header. */
export type Cost = number | { header: string; max: number; default?: number }

/** `cost` after validation: a header cost's `default` filled in. */
export type CheckedCost = number | { header: string; max: number; default: number }

/** Count responses, not requests: those with these statuses, and/or at the cost a header reports. */
export interface CountOn {
  /** Codes (`401`), classes (`"5xx"`) or inclusive ranges (`"500-503"`). */
  status?: (number | string)[]
  header?: string
}

/** The request's tier picks the limit. */
export interface Tiers {
  /** `"header:<name>"` or `"claim:<name>"`. */
  from: string
  /** Tier name → limit. */
  limits: Record<string, number>
}

/** A limit on the messages a client sends over a WebSocket the rule let through. */
export interface Messages {
  limit: number
  period: Duration
  per?: 'connection' | 'key'
  onExceed?: 'close' | 'drop'
}

/** `messages` after validation. */
export interface CheckedMessages {
  limit: number
  /** In ms. */
  period: number
  per: 'connection' | 'key'
  onExceed: 'close' | 'drop'
}

/** Clients an allow or deny list names. */
export interface List {
  /** Addresses or CIDR ranges, IPv4 and IPv6. */
  ips?: string[]
  /** Two-letter country codes. */
  countries?: string[]
  asns?: number[]
  /** Header name → exact values. */
  headers?: Record<string, string[]>
}

/** Allow-listed clients skip limiting; deny-listed ones get 403. */
export interface Lists {
  allow?: List
  deny?: List
}

/** A public key as a JWK (members WebCrypto does not use may be present, or undefined). */
export interface Jwk {
  kty?: string
  n?: string
  e?: string
  crv?: string
  x?: string
  y?: string
  [member: string]: string | number | boolean | string[] | undefined
}

/** How tokens whose claims choose tiers (or key rules) are verified. */
export interface JwtSettings {
  alg: 'HS256' | 'RS256' | 'ES256'
  /** HS256: `"env:<SECRET_NAME>"`, a Worker secret. */
  secret?: string
  /** RS256, ES256: an SPKI PEM or a JWK. */
  publicKey?: string | Jwk
  /** Default `authorization` (a `Bearer ` prefix is stripped). */
  header?: string
  issuer?: string
  audience?: string
  requireExp?: boolean
  /** How far `exp`, `nbf` and `iat` may be off; at most 5 minutes. */
  clockSkew?: Duration
}

/** `jwt` after validation: defaults filled in, the public key checked and ready to import. */
export interface CheckedJwtSettings {
  alg: 'HS256' | 'RS256' | 'ES256'
  secret?: string
  publicKey?: string | Jwk
  header: string
  issuer?: string
  audience?: string
  requireExp: boolean
  /** In ms. */
  clockSkew: number
  /** The public key as WebCrypto imports it. */
  key?: KeyMaterial
}

/** The fields every rule may have. */
interface RuleFields {
  id: string
  description?: string
  match?: Match
  /** `ip`, `path`, `method`, `host`, `cf:country`, `cf:asn`, `header:<name>`, `query:<name>`, `claim:<name>`. */
  key: string[]
  limit: number
  failMode?: FailMode
  cost?: Cost
  consistency?: 'exact' | 'leased'
  penalty?: Duration
  shadow?: boolean
  tiers?: Tiers
  showKeys?: boolean
  nearLimit?: number
  replaces?: string[]
  locationHint?: LocationHint
  jurisdiction?: Jurisdiction
  countOn?: CountOn
  maxInFlight?: number
  action?: 'reject' | 'degrade'
  degradeTo?: string
  degradeHeader?: true
  messages?: Messages
}

/** A rule counted per `period`. */
interface PeriodRule extends RuleFields {
  period: Duration
}

/** One rule as written: the fields each algorithm takes. */
export type RuleDefinition =
  | (PeriodRule & { algorithm: 'sliding-window' | 'fixed-window' | 'sliding-log' })
  | (PeriodRule & { algorithm: 'gcra' | 'token-bucket'; burst?: number })
  | (PeriodRule & {
      algorithm: 'leaky-bucket'
      burst?: number
      mode?: 'meter' | 'shape'
      maxWait?: Duration
    })
  | (RuleFields & {
      algorithm: 'concurrency'
      queue?: number
      maxWait?: Duration
      lease?: Duration
    })

/** A rules document as written. */
export interface RulesDocument {
  $schema?: string
  version: 1
  mode?: 'enforce' | 'shadow' | 'off'
  shadowHeaders?: boolean
  lists?: Lists
  jwt?: JwtSettings
  jurisdiction?: Jurisdiction
  /** envoyproxy/ratelimit configurations, checked by Envoy's own rules. */
  domains?: unknown[]
  rules: RuleDefinition[]
}

/** The fields every rule has after validation: durations in ms, defaults filled in. */
interface CheckedRuleFields {
  id: string
  description?: string
  match?: Match
  key: string[]
  limit: number
  failMode: FailMode
  cost?: CheckedCost
  consistency: 'exact' | 'leased'
  /** In ms. */
  penalty?: number
  shadow: boolean
  tiers?: Tiers
  showKeys?: boolean
  nearLimit?: number
  replaces?: string[]
  locationHint?: LocationHint
  jurisdiction?: Jurisdiction
  countOn?: CountOn
  maxInFlight?: number
  action: 'reject' | 'degrade'
  degradeTo?: string
  degradeHeader?: true
  messages?: CheckedMessages
}

/** A checked rule counted per period. */
interface CheckedPeriodRule extends CheckedRuleFields {
  /** In ms. */
  period: number
}

/** One rule after validation. */
export type CheckedRule =
  | (CheckedPeriodRule & { algorithm: 'sliding-window' | 'fixed-window' | 'sliding-log' })
  | (CheckedPeriodRule & { algorithm: 'gcra' | 'token-bucket'; burst?: number })
  | (CheckedPeriodRule & {
      algorithm: 'leaky-bucket'
      burst?: number
      mode: 'meter' | 'shape'
      /** In ms. */
      maxWait?: number
    })
  | (CheckedRuleFields & {
      algorithm: 'concurrency'
      queue: number
      /** In ms. */
      maxWait: number
      /** In ms. */
      lease: number
    })

/** A rules document after validation. */
export interface CheckedRulesDocument {
  $schema?: string
  version: 1
  mode: 'enforce' | 'shadow' | 'off'
  shadowHeaders: boolean
  lists?: Lists
  jwt?: CheckedJwtSettings
  jurisdiction?: Jurisdiction
  domains?: unknown[]
  rules: CheckedRule[]
}
