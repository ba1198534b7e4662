/**
 * @module provider/rules-source
 * Where the rules in force come from: a static rule set, or the bundled default overridden by
 * a document in Workers KV that each isolate re-reads on an interval.
 */
import { RuleConfigError } from '../errors'
import type { RuleSet } from '../rules'
import {
  KV_STALE_MS,
  LAST_GOOD_KV_KEY,
  metadataFor,
  nextRevision,
  parseStored,
  readStored,
  RULES_KV_KEY,
  type StoredRules,
} from './rules-store'
import type { RulesContext, RulesSource, RulesStatus } from './source'
import { logEvent } from '../log'

export { RULES_KV_KEY, LAST_GOOD_KV_KEY } from './rules-store'
export { staticRules, type RulesContext, type RulesSource, type RulesStatus } from './source'

/** How long the first requests of an isolate wait for its first KV read before the bundled rules serve. */
export const FIRST_READ_WAIT_MS = 2000

const SOURCE = `kv:${RULES_KV_KEY}`
const LAST_GOOD_SOURCE = `kv:${LAST_GOOD_KV_KEY}`

/**
 * The bundled default, overridden by the `rules` key of a KV namespace, with `rules:last-good`
 * standing in while that key holds an invalid document.
 *
 * KV is never read at module load and never on every request: the first request in an isolate
 * reads it (others arriving meanwhile wait for that same read); after `refreshMs` one request
 * starts a background re-read and everyone keeps the copy in hand until it lands. A read never
 * takes an isolate back to an older document: not one with a lower revision, not a read that
 * started before a `put` in this isolate, and not (for {@link KV_STALE_MS}) a value without a
 * revision that the isolate has just moved away from, which is KV serving its previous value.
 */
export class KvRulesSource implements RulesSource {
  readonly #fallback: () => RuleSet
  readonly #now: () => number
  #held: RulesStatus | undefined
  /** Orders what is held: its revision, or one more than what a hand-written value replaced. */
  #order = 0
  /** The `rules` value last acted on (taken or refused), so an unchanged one is not re-parsed. */
  #seen: Pick<StoredRules, 'text' | 'revision'> | undefined
  /** `rules` values this isolate moved away from, with when, for the stale window. */
  readonly #left = new Map<string | null, number>()
  /** Bumped by every `put`: a read that started before one is dropped. */
  #generation = 0
  #checkedAtMs = Number.NEGATIVE_INFINITY
  #reading: Promise<void> | undefined
  readonly #wait: (ms: number) => Promise<void>

  /**
   * @param fallback - the default rules, parsed on first use
   * @param now - the clock (tests pass their own)
   * @param wait - resolves after `ms` (tests pass their own)
   */
  constructor(
    fallback: () => RuleSet,
    now: () => number = Date.now,
    wait: (ms: number) => Promise<void> = (ms) => scheduler.wait(ms)
  ) {
    this.#fallback = fallback
    this.#now = now
    this.#wait = wait
  }

  /** @inheritdoc */
  async get(context: RulesContext): Promise<RuleSet> {
    if (!context.kv) return this.status().ruleSet
    const nowMs = this.#now()
    if (this.#reading === undefined && nowMs - this.#checkedAtMs >= context.refreshMs) {
      this.#checkedAtMs = nowMs
      this.#reading = this.#read(context.kv).finally(() => {
        this.#reading = undefined
      })
      // Kept alive past this request: others may be waiting on the same read.
      context.waitUntil(this.#reading)
    }
    if (!this.#held) await this.#firstRead()
    return this.status().ruleSet
  }

  /**
   * Waits for the isolate's first read, at most {@link FIRST_READ_WAIT_MS}: a KV read that hangs
   * must not hold every request. Past that the bundled rules serve until the read lands (a later
   * document, even one without a revision, replaces them then).
   */
  async #firstRead(): Promise<void> {
    const late = Symbol('late')
    const outcome = await Promise.race([
      this.#reading,
      this.#wait(FIRST_READ_WAIT_MS).then(() => late),
    ])
    if (outcome !== late || this.#held) return
    this.#take(this.#bundled(), 0)
    log('rules-read-slow', { waitedMs: FIRST_READ_WAIT_MS, ...this.#inForce() })
  }

  /** @inheritdoc */
  status(): RulesStatus {
    return (this.#held ??= this.#bundled())
  }

  /** @inheritdoc */
  async put(kv: KVNamespace, text: string): Promise<RulesStatus> {
    const ruleSet = parseStored(text, SOURCE)
    if (ruleSet instanceof RuleConfigError) throw ruleSet
    const [current, lastGood] = await Promise.all(
      [RULES_KV_KEY, LAST_GOOD_KV_KEY].map((key) => readStored(kv, key).catch(() => undefined))
    )
    const nowMs = this.#now()
    const revision = nextRevision(nowMs, this.#order, current?.revision, lastGood?.revision)
    const metadata = metadataFor(revision, nowMs)
    await kv.put(RULES_KV_KEY, text, { metadata })
    await kv.put(LAST_GOOD_KV_KEY, text, { metadata })
    this.#generation++
    this.#see({ text, revision })
    this.#take({ ruleSet, inForce: 'kv', revision, updatedAt: metadata.updatedAt }, revision)
    this.#checkedAtMs = nowMs
    log('rules-put', { source: SOURCE, revision, rules: ruleSet.rules.length })
    return this.status()
  }

  async #read(kv: KVNamespace): Promise<void> {
    const generation = this.#generation
    let current: StoredRules
    try {
      current = await readStored(kv, RULES_KV_KEY)
    } catch (error) {
      log('rules-refresh-failed', { key: RULES_KV_KEY, error: String(error) })
      return
    }
    // A put landed while this read was in flight: what it stored is newer than what was read.
    if (generation !== this.#generation) return
    const seen = this.#seen
    if (this.#held && current.text === seen?.text && current.revision === seen.revision) return
    if (this.#held && this.#isOlder(current)) {
      log('rules-stale-ignored', { revision: current.revision ?? null, ...this.#inForce() })
      return
    }
    const moved = this.#seen !== undefined
    this.#see(current)
    const order = current.revision ?? this.#order + 1
    if (current.text === null) {
      if (this.#held && this.#held.inForce !== 'bundled') log('rules-override-removed', {})
      this.#take(this.#bundled(), order)
      return
    }
    const parsed = parseStored(current.text, SOURCE)
    if (parsed instanceof RuleConfigError) return this.#refuse(kv, current, parsed, generation)
    const revision = current.revision ?? null
    this.#take(
      { ruleSet: parsed, inForce: 'kv', revision, updatedAt: current.updatedAt ?? null },
      order
    )
    log('rules-loaded', this.#inForce())
    // A hand-written document has no writer that copied it to last-good: an isolate that saw it
    // replace another does (a fresh one cannot tell it from a stale copy, so it does not).
    if (current.revision === undefined && moved)
      await this.#copyToLastGood(kv, current.text, order, generation)
  }

  /** The `rules` value is invalid: keep what is held, unless last-good is newer (or nothing is held). */
  async #refuse(
    kv: KVNamespace,
    current: StoredRules,
    error: RuleConfigError,
    generation: number
  ): Promise<void> {
    let lastGood: StoredRules | undefined
    try {
      lastGood = await readStored(kv, LAST_GOOD_KV_KEY)
    } catch (readError) {
      log('rules-refresh-failed', { key: LAST_GOOD_KV_KEY, error: String(readError) })
    }
    if (generation !== this.#generation) return
    const newer = !this.#held || (lastGood?.revision ?? 0) > this.#order
    if (lastGood?.text != null && newer) {
      const parsed = parseStored(lastGood.text, LAST_GOOD_SOURCE)
      if (parsed instanceof RuleConfigError) {
        log('rules-rejected', {
          source: LAST_GOOD_SOURCE,
          revision: lastGood.revision ?? null,
          problems: parsed.problems,
        })
      } else {
        const revision = lastGood.revision ?? null
        const updatedAt = lastGood.updatedAt ?? null
        this.#take({ ruleSet: parsed, inForce: 'last-good', revision, updatedAt }, revision ?? 0)
      }
    }
    const held = this.status()
    const rejected = {
      source: SOURCE,
      revision: current.revision ?? null,
      problems: error.problems,
    }
    this.#held = { ...held, rejected }
    log('rules-rejected', { ...rejected, ...this.#inForce() })
  }

  async #copyToLastGood(
    kv: KVNamespace,
    text: string,
    order: number,
    generation: number
  ): Promise<void> {
    try {
      const lastGood = await readStored(kv, LAST_GOOD_KV_KEY)
      if (generation !== this.#generation) return
      if (lastGood.text === text || (lastGood.revision ?? -1) >= order) return
      await kv.put(LAST_GOOD_KV_KEY, text, { metadata: metadataFor(order, this.#now()) })
      log('rules-last-good-written', { revision: order })
    } catch (error) {
      log('rules-last-good-failed', { error: String(error) })
    }
  }

  /** A value KV may be serving after a newer write this isolate already holds. */
  #isOlder(current: StoredRules): boolean {
    if (current.revision !== undefined) return current.revision <= this.#order
    const nowMs = this.#now()
    for (const [text, atMs] of this.#left) if (nowMs - atMs >= KV_STALE_MS) this.#left.delete(text)
    return this.#left.has(current.text)
  }

  #see(value: Pick<StoredRules, 'text' | 'revision'>): void {
    if (this.#seen && this.#seen.text !== value.text) this.#left.set(this.#seen.text, this.#now())
    this.#left.delete(value.text)
    this.#seen = { text: value.text, revision: value.revision }
  }

  #take(status: RulesStatus, order: number): void {
    this.#held = status
    this.#order = order
  }

  #bundled(): RulesStatus {
    return { ruleSet: this.#fallback(), inForce: 'bundled', revision: null, updatedAt: null }
  }

  #inForce(): Record<string, unknown> {
    const held = this.status()
    return {
      inForce: held.inForce,
      inForceSource: held.ruleSet.source,
      inForceRevision: held.revision,
    }
  }
}

function log(event: string, fields: Record<string, unknown>): void {
  logEvent(event.endsWith('failed') || event.endsWith('rejected') ? 'error' : 'log', event, fields)
}

/**
 * Rules from the `rules` key of the `RULES` KV namespace, with `defaults` while the key is
 * absent (or its document and `rules:last-good` are invalid and nothing better was loaded).
 *
 * @param defaults - the default rule set, or a function that parses it on first use
 * @example rateLimit({ rules: kvRules(parseRules(defaults, 'defaults')) })
 */
export function kvRules(defaults: RuleSet | (() => RuleSet)): RulesSource {
  return new KvRulesSource(typeof defaults === 'function' ? defaults : () => defaults)
}
