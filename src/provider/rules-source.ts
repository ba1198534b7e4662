/**
 * @module provider/rules-source
 * Where the rules in force come from: a static rule set, or the bundled default overridden by
 * a document in Workers KV that each isolate re-reads on an interval.
 */
import { RuleConfigError } from '../errors'
import { parseRulesText, type RuleSet } from '../rules'

/** The KV key holding the rules document. */
export const RULES_KV_KEY = 'rules'

/** What a source needs from the request that asks for rules. */
export interface RulesContext {
  /** The namespace holding the override, if any. */
  kv?: KVNamespace | undefined
  /** How old the isolate's copy may get before it is re-read (ms). */
  refreshMs: number
  /** Keeps a background refresh alive past the response. */
  waitUntil(promise: Promise<unknown>): void
}

/** Anything that can say which rules are in force. */
export interface RulesSource {
  /** The rules to apply to this request. */
  get(context: RulesContext): Promise<RuleSet>
  /**
   * Validates a new document, stores it, and puts it in force in this isolate at once (others
   * follow within their refresh interval plus KV's propagation). Absent on fixed sources.
   *
   * @throws {RuleConfigError} when the document is invalid; nothing changes then
   */
  put?(kv: KVNamespace, text: string): Promise<RuleSet>
}

/**
 * A fixed rule set: for library use, and for tests.
 *
 * @param ruleSet - the rules, already parsed
 */
export function staticRules(ruleSet: RuleSet): RulesSource {
  return { get: () => Promise.resolve(ruleSet) }
}

/**
 * The bundled default, overridden by the `rules` key of a KV namespace.
 *
 * KV is never read at module load and never on every request: the first request in an isolate
 * reads it (others arriving meanwhile wait for that same read); after `refreshMs` one request
 * starts a background re-read and everyone keeps the copy in hand until it lands. A document
 * that fails validation, or a read that fails, is logged and changes nothing: the last good
 * rules stay in force. A missing key means the bundled default.
 */
export class KvRulesSource implements RulesSource {
  readonly #fallback: () => RuleSet
  readonly #now: () => number
  #ruleSet: RuleSet | undefined
  #text: string | null = null
  #checkedAtMs = Number.NEGATIVE_INFINITY
  #reading: Promise<void> | undefined

  /**
   * @param fallback - the default rules, parsed on first use
   * @param now - the clock (tests pass their own)
   */
  constructor(fallback: () => RuleSet, now: () => number = Date.now) {
    this.#fallback = fallback
    this.#now = now
  }

  /** @inheritdoc */
  async get(context: RulesContext): Promise<RuleSet> {
    if (!context.kv) return (this.#ruleSet ??= this.#fallback())
    const nowMs = this.#now()
    if (this.#reading === undefined && nowMs - this.#checkedAtMs >= context.refreshMs) {
      this.#checkedAtMs = nowMs
      this.#reading = this.#read(context.kv).finally(() => {
        this.#reading = undefined
      })
      // Kept alive past this request: others may be waiting on the same read.
      context.waitUntil(this.#reading)
    }
    if (!this.#ruleSet) await this.#reading
    return (this.#ruleSet ??= this.#fallback())
  }

  /** @inheritdoc */
  async put(kv: KVNamespace, text: string): Promise<RuleSet> {
    const ruleSet = parseRulesText(text, `kv:${RULES_KV_KEY}`)
    await kv.put(RULES_KV_KEY, text)
    this.#ruleSet = ruleSet
    this.#text = text
    this.#checkedAtMs = this.#now()
    log('rules-put', { source: ruleSet.source, rules: ruleSet.rules.length })
    return ruleSet
  }

  async #read(kv: KVNamespace): Promise<void> {
    let text: string | null
    try {
      text = await kv.get(RULES_KV_KEY, 'text')
    } catch (error) {
      log('rules-refresh-failed', { error: String(error) })
      return
    }
    if (text === this.#text && this.#ruleSet) return
    if (text === null) {
      if (this.#ruleSet) log('rules-override-removed', {})
      this.#ruleSet = this.#fallback()
      this.#text = null
      return
    }
    try {
      this.#ruleSet = parseRulesText(text, `kv:${RULES_KV_KEY}`)
      this.#text = text
      log('rules-loaded', { source: this.#ruleSet.source, rules: this.#ruleSet.rules.length })
    } catch (error) {
      if (!(error instanceof RuleConfigError)) throw error
      // Remember the bad text so it is not re-parsed and re-logged on every refresh.
      this.#text = text
      this.#ruleSet ??= this.#fallback()
      log('rules-rejected', {
        source: error.source,
        problems: error.problems,
        inForce: this.#ruleSet.source,
      })
    }
  }
}

function log(event: string, fields: Record<string, unknown>): void {
  const line = JSON.stringify({ event, ...fields })
  if (event.endsWith('failed') || event.endsWith('rejected')) console.error(line)
  else console.log(line)
}

/**
 * Rules from the `rules` key of the `RULES` KV namespace, with `defaults` while the key is
 * absent (or its document is invalid and nothing better was ever loaded).
 *
 * @param defaults - the default rule set, or a function that parses it on first use
 * @example rateLimit({ rules: kvRules(parseRules(defaults, 'defaults')) })
 */
export function kvRules(defaults: RuleSet | (() => RuleSet)): RulesSource {
  return new KvRulesSource(typeof defaults === 'function' ? defaults : () => defaults)
}
