/**
 * @module provider/source
 * What a rules source is: where the limiter gets the rules in force, and what it can say
 * about them.
 */
import type { RuleSet } from '../rules'

/** What a source needs from the request that asks for rules. */
export interface RulesContext {
  /** The namespace holding the override, if any. */
  kv?: KVNamespace | undefined
  /** How old the isolate's copy may get before it is re-read (ms). */
  refreshMs: number
  /** Keeps a background refresh alive past the response. */
  waitUntil(promise: Promise<unknown>): void
}

/** Which document is in force, and what was refused. */
export interface RulesStatus {
  ruleSet: RuleSet
  /** The `rules` key, its last-known-good copy, the bundled default, or a fixed rule set. */
  inForce: 'kv' | 'last-good' | 'bundled' | 'static'
  /** The revision stamped by the writer; null for the bundled rules or a hand-written value. */
  revision: number | null
  updatedAt: string | null
  /** The `rules` value this isolate refused, while it is still the one it last read. */
  rejected?: { source: string; revision: number | null; problems: readonly string[] }
}

/** Anything that can say which rules are in force. */
export interface RulesSource {
  /** The rules to apply to this request. */
  get(context: RulesContext): Promise<RuleSet>
  /** Which document is in force in this isolate (after `get`). Absent on fixed sources. */
  status?(): RulesStatus
  /**
   * Validates a new document, stores it with the next revision, and puts it in force in this
   * isolate at once (others follow within their refresh interval plus KV's propagation).
   * Absent on fixed sources.
   *
   * @throws {RuleConfigError} when the document is invalid; nothing changes then
   */
  put?(kv: KVNamespace, text: string): Promise<RulesStatus>
}

/**
 * A fixed rule set: for library use, and for tests.
 *
 * @param ruleSet - the rules, already parsed
 */
export function staticRules(ruleSet: RuleSet): RulesSource {
  return { get: () => Promise.resolve(ruleSet) }
}
