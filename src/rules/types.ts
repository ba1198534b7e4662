/**
 * @module rules/types
 * A compiled rules document: what `parse.ts` and `compile.ts` build once, and the rest of
 * `rules/` reads per request. Types only.
 */
import type { Policy } from '../algorithms'
import type { FailMode, Jurisdiction, Placement } from '../types'
import type { Cost } from './cost'
import type { CountOn } from './count-on'
import type { Degrade } from './degrade'
import type { EnvoyDomains } from './envoy'
import type { Field } from './fields'
import type { Glob } from './glob'
import type { JwtConfig } from './jwt'
import type { ListMatcher } from './lists'
import type { MessageLimit } from './messages'
import type { Tiers } from './tiers'

/** A compiled key part: where in the request a piece of the limit key comes from. */
export type KeyPart =
  | { kind: 'ip' | 'method' | 'host' | 'country' | 'asn' }
  /** `fold`: lower-cased, for a rule that matches paths without case. */
  | { kind: 'path'; fold: boolean }
  | { kind: 'claim'; name: string }
  | Field

/** Compiled `match`: every present condition must hold. */
export interface Matcher {
  paths?: readonly Glob[]
  /** Whether `paths` keep case; otherwise they and the request path are lower-cased. */
  caseSensitive?: boolean
  methods?: ReadonlySet<string>
  hosts?: readonly Glob[]
  /** `match.headers` and `match.query`: the request's value must be one of those listed. */
  fields?: readonly { field: Field; values: ReadonlySet<string> }[]
}

/** A validated, compiled rule. */
export interface Rule {
  /** Unique id; names the policy in headers and the 429 body. */
  id: string
  /** Which requests the rule applies to. */
  match: Matcher
  /** What identifies a client; an empty list means one counter for everyone. */
  key: readonly KeyPart[]
  /** The limit, as the Durable Object runs it. */
  policy: Policy
  /** What happens when the Durable Object cannot decide. */
  failMode: FailMode
  /** "100 requests per 1m", for messages. */
  summary: string
  /** Units a request takes. */
  cost: Cost
  /** Counted and reported as "would deny", never blocking. */
  shadow: boolean
  /** Ids of rules this one stands in for when both apply to a request. */
  replaces: readonly string[]
  /** Limits and policies by tier, if the rule has tiers. */
  tiers?: Tiers
  /** Whether metrics, the live view and alerts may show its limit keys (else their hashes). */
  showKeys: boolean
  /** The fraction of the limit whose use raises a near-limit event, if any. */
  nearLimit?: number
  /** The `match.path` patterns as written, for metrics (`[]`: any path). */
  paths: readonly string[]
  /** `exact`: every request asks the key's object; `leased`: isolates spend reserved units. */
  consistency: 'exact' | 'leased'
  /** Where its Durable Objects live, if the rule or the document says. */
  placement?: Placement
  /** Counts matching responses after the origin instead of every request before it. */
  countOn?: CountOn
  /** `action: "degrade"`: where a limited request goes instead of a 429. */
  degrade?: Degrade
  /** The limit on messages a client sends over a WebSocket the rule let through, if any. */
  messages?: MessageLimit
}

/** A validated rules document. Frozen: shared by every request in an isolate. */
export interface RuleSet {
  /** Where it came from (`rules.json`, `kv:rules`, …). */
  source: string
  /** The document as it was written (for showing it back, e.g. the admin API). */
  document: unknown
  /** `enforce`; `shadow`: evaluate and count, never block; `off`: the kill switch. */
  mode: 'enforce' | 'shadow' | 'off'
  /** Whether rules in shadow report their headers to clients. */
  shadowHeaders: boolean
  /** Clients that skip limiting. */
  allow?: ListMatcher
  /** Clients refused with 403. */
  deny?: ListMatcher
  /** How tokens whose claims choose tiers are verified. */
  jwt?: JwtConfig
  /** The jurisdiction of every counter without its own (rules, and Envoy domains). */
  jurisdiction?: Jurisdiction
  /** envoyproxy/ratelimit configurations, for `POST /json`. */
  domains: EnvoyDomains
  rules: readonly Rule[]
}
