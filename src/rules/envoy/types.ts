/**
 * @module rules/envoy/types
 * The compiled form of envoyproxy/ratelimit configurations. Types only: `config.ts` and
 * `limit-block.ts` build it when a rules document loads; `limits.ts` and `decide.ts` read it
 * per request.
 */
import type { Policy } from '../../algorithms'
import type { Glob } from '../glob'
import type { EnvoyUnit } from './units'

/** A map of a parsed YAML or JSON document, before it is validated. */
export type Raw = Record<string, unknown>

/** The algorithms a `rate_limit` block may name (our extension; Envoy's is the fixed window). */
export type EnvoyAlgorithm = 'fixed-window' | 'sliding-window' | 'token-bucket'

/** What every compiled `rate_limit` block says. */
interface LimitBlock {
  requestsPerUnit: number
  name: string
  replaces: readonly string[]
  shadow: boolean
  quota: boolean
}

/** A limit that is counted: so many requests per unit, under one policy. */
export interface CountedLimit extends LimitBlock {
  unlimited: false
  unit: EnvoyUnit
  /** The algorithm to count with (Envoy's fixed window by default). */
  algorithm: EnvoyAlgorithm
  /** What its counter runs: built once when the config loads (a request's own `limit`, per request). */
  policy: Policy
}

/** `unlimited: true`: OK without counting. */
export interface UnlimitedLimit extends LimitBlock {
  unlimited: true
}

/** A compiled `rate_limit` block. */
export type EnvoyLimit = CountedLimit | UnlimitedLimit

/** One level of a descriptor tree. */
export interface EnvoyNode {
  limit?: EnvoyLimit
  /** Children by composite key: `key` or `key_value`. */
  children: Map<string, EnvoyNode>
  /** Children whose value has a `*`, in the order written. */
  wildcards: { key: string; glob: Glob }[]
  /** `share_threshold`: values matching the wildcard share one counter, named by `wildcardPattern`. */
  shareThreshold: boolean
  wildcardPattern?: string
}

/** Compiled domains by name. */
export type EnvoyDomains = ReadonlyMap<string, EnvoyNode>
