import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  KvRulesSource,
  LAST_GOOD_KV_KEY,
  RULES_KV_KEY,
  type RulesContext,
} from '../../src/provider/rules-source'
import { parseRules, type RuleSet } from '../../src/rules'
import { clearStoredRules } from '../support/stored-rules'

const doc = (id: string, limit = 5) =>
  JSON.stringify({
    version: 1,
    rules: [{ id, key: ['ip'], algorithm: 'sliding-window', limit, period: '1m' }],
  })
const fallback = parseRules(JSON.parse(doc('bundled')), 'rules.json')

/** A source on a clock the test moves, and a context that records background work. */
function setup(kv: KVNamespace = env.RULES, refreshMs = 30_000) {
  let nowMs = 1_000_000
  const pending: Promise<unknown>[] = []
  const source = new KvRulesSource(
    () => fallback,
    () => nowMs
  )
  const context: RulesContext = { kv, refreshMs, waitUntil: (p) => pending.push(p) }
  return {
    source,
    get: () => source.get(context),
    advance: (ms: number) => (nowMs += ms),
    settle: () => Promise.all(pending.splice(0)),
  }
}

const ids = (ruleSet: RuleSet) => ruleSet.rules.map((r) => r.id)

/** Counts reads of the `rules` key on the real namespace. */
function counting(kv: KVNamespace): { kv: KVNamespace; reads: () => number } {
  let reads = 0
  const wrapped = wrap(kv, {
    getWithMetadata: (key: string) => {
      if (key === RULES_KV_KEY) reads++
      return kv.getWithMetadata(key, 'text')
    },
  })
  return { kv: wrapped, reads: () => reads }
}

/** The real namespace with some methods replaced. */
function wrap(kv: KVNamespace, methods: Record<string, unknown>): KVNamespace {
  return {
    getWithMetadata: (key: string) => kv.getWithMetadata(key, 'text'),
    put: (key: string, value: string, options?: KVNamespacePutOptions) =>
      kv.put(key, value, options),
    ...methods,
  } as unknown as KVNamespace
}

describe('KvRulesSource', () => {
  beforeEach(clearStoredRules)

  it('serves the bundled rules while KV has no document', async () => {
    const { get } = setup()
    expect((await get()).source).toBe('rules.json')
  })

  it('lets a valid KV document override the bundled rules', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('from-kv'))
    const { get } = setup()
    const ruleSet = await get()
    expect(ruleSet.source).toBe('kv:rules')
    expect(ids(ruleSet)).toEqual(['from-kv'])
  })

  it('ignores an invalid KV document at start and keeps the bundled rules', async () => {
    await env.RULES.put(RULES_KV_KEY, '{"version":1,"rules":[{"id":"x"}]}')
    const { get } = setup()
    expect((await get()).source).toBe('rules.json')
  })

  it('re-reads only after the refresh interval, in the background', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('first'))
    const { kv, reads } = counting(env.RULES)
    const { get, advance, settle } = setup(kv, 30_000)
    expect(ids(await get())).toEqual(['first'])
    await env.RULES.put(RULES_KV_KEY, doc('second'))
    advance(29_999)
    for (let i = 0; i < 50; i++) await get()
    await settle()
    expect(reads()).toBe(1)
    expect(ids(await get())).toEqual(['first'])
    advance(1)
    // The request that notices the stale copy is still served from it; the re-read lands after.
    expect(ids(await get())).toEqual(['first'])
    await settle()
    expect(reads()).toBe(2)
    expect(ids(await get())).toEqual(['second'])
  })

  it('keeps the last good rules when a refresh finds an invalid document', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('good'))
    const { get, advance, settle } = setup()
    expect(ids(await get())).toEqual(['good'])
    await env.RULES.put(RULES_KV_KEY, doc('bad', 0))
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['good'])
  })

  it('keeps the rules in force when a refresh fails', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('good'))
    let fail = false
    const kv = wrap(env.RULES, {
      getWithMetadata: (key: string) =>
        fail ? Promise.reject(new Error('KV unavailable')) : env.RULES.getWithMetadata(key),
    })
    const { get, advance, settle } = setup(kv)
    expect(ids(await get())).toEqual(['good'])
    fail = true
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['good'])
  })

  it('falls back to the bundled rules when the override is deleted', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('temporary'))
    const { get, advance, settle } = setup()
    expect(ids(await get())).toEqual(['temporary'])
    await env.RULES.delete(RULES_KV_KEY)
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['bundled'])
  })

  it('reads KV once for a crowd of first requests', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('crowd'))
    const { kv, reads } = counting(env.RULES)
    const { get } = setup(kv)
    const sets = await Promise.all(Array.from({ length: 20 }, () => get()))
    expect(reads()).toBe(1)
    expect(sets.every((s) => ids(s)[0] === 'crowd')).toBe(true)
  })

  it('without a KV binding serves the defaults', async () => {
    const source = new KvRulesSource(() => fallback)
    expect((await source.get({ kv: undefined, refreshMs: 1, waitUntil: () => {} })).source).toBe(
      'rules.json'
    )
  })
})

/** Writes `text` under `key` the way a validated writer does. */
const stamped = (key: string, text: string, revision: number) =>
  env.RULES.put(key, text, {
    metadata: { revision, updatedAt: new Date(revision).toISOString() },
  })

const INVALID = '{"version":1,"rules":[{"id":"x"}]}'

describe('KvRulesSource: last-known-good and revisions', () => {
  beforeEach(clearStoredRules)
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('loads rules:last-good in a fresh isolate when `rules` is invalid, and logs which is in force', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    await stamped(LAST_GOOD_KV_KEY, doc('last-good'), 500)
    await env.RULES.put(RULES_KV_KEY, INVALID)
    const { get, source } = setup()
    expect(ids(await get())).toEqual(['last-good'])
    expect(source.status()).toMatchObject({
      inForce: 'last-good',
      revision: 500,
      rejected: { source: 'kv:rules', revision: null },
    })
    expect(source.status().rejected?.problems.length).toBeGreaterThan(0)
    const events = errors.mock.calls.map((call) => JSON.parse(String(call[0])))
    expect(events).toContainEqual(
      expect.objectContaining({
        event: 'rules-rejected',
        source: 'kv:rules',
        inForce: 'last-good',
        inForceSource: 'kv:rules:last-good',
        inForceRevision: 500,
      })
    )
  })

  it('falls back to the bundled rules when last-good is invalid too, logging both', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    await stamped(LAST_GOOD_KV_KEY, doc('bad', 0), 500)
    await env.RULES.put(RULES_KV_KEY, INVALID)
    const { get, source } = setup()
    expect(ids(await get())).toEqual(['bundled'])
    expect(source.status().inForce).toBe('bundled')
    const rejected = errors.mock.calls
      .map((call) => JSON.parse(String(call[0])))
      .filter((e) => e.event === 'rules-rejected')
      .map((e) => e.source)
    expect(rejected).toEqual(['kv:rules:last-good', 'kv:rules'])
  })

  it('moves a running isolate to a newer last-good when `rules` turns invalid', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    await stamped(RULES_KV_KEY, doc('old'), 100)
    const { get, advance, settle } = setup()
    expect(ids(await get())).toEqual(['old'])
    await stamped(LAST_GOOD_KV_KEY, doc('newer'), 200)
    await env.RULES.put(RULES_KV_KEY, INVALID)
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['newer'])
  })

  it('put stamps a revision above anything seen and writes both keys', async () => {
    await stamped(LAST_GOOD_KV_KEY, doc('future'), 5_000_000)
    const { source } = setup()
    const status = await source.put(env.RULES, doc('put'))
    expect(status).toMatchObject({ inForce: 'kv', revision: 5_000_001 })
    for (const key of [RULES_KV_KEY, LAST_GOOD_KV_KEY]) {
      const stored = await env.RULES.getWithMetadata(key, 'text')
      expect(stored.value).toBe(doc('put'))
      expect(stored.metadata).toEqual({
        revision: 5_000_001,
        updatedAt: new Date(1_000_000).toISOString(),
      })
    }
    const next = await source.put(env.RULES, doc('again'))
    expect(next.revision).toBe(5_000_002)
  })

  it('drops a read that was in flight when a put landed', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('before'))
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    let gated = false
    const kv = wrap(env.RULES, {
      getWithMetadata: async (key: string) => {
        const held = gated && key === RULES_KV_KEY
        const read = await env.RULES.getWithMetadata(key, 'text')
        if (held) await gate
        return read
      },
    })
    const { get, advance, settle, source } = setup(kv)
    expect(ids(await get())).toEqual(['before'])
    // The operator's hand-written value lands, a refresh reads it, then an admin PUT lands.
    await env.RULES.put(RULES_KV_KEY, doc('hand-written'))
    gated = true
    advance(30_000)
    await get()
    gated = false
    await source.put(kv, doc('put'))
    release()
    await settle()
    expect(ids(await get())).toEqual(['put'])
  })

  it('never goes back to an older revision KV still serves after a put', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    await stamped(RULES_KV_KEY, doc('old'), 100)
    // KV's eventual consistency: this location keeps serving the value it cached.
    const cached = await env.RULES.getWithMetadata(RULES_KV_KEY, 'text')
    const kv = wrap(env.RULES, {
      getWithMetadata: async (key: string) =>
        key === RULES_KV_KEY ? cached : env.RULES.getWithMetadata(key, 'text'),
    })
    const { get, advance, settle, source } = setup(kv)
    expect(ids(await get())).toEqual(['old'])
    await source.put(kv, doc('put'))
    for (let i = 0; i < 10; i++) {
      advance(30_000)
      await get()
      await settle()
    }
    expect(ids(await get())).toEqual(['put'])
    const events = log.mock.calls.map((call) => JSON.parse(String(call[0])).event)
    expect(events).toContain('rules-stale-ignored')
  })

  it('ignores a stale hand-written value for a minute after moving away from it, then takes it', async () => {
    await env.RULES.put(RULES_KV_KEY, doc('hand-written'))
    const cached = await env.RULES.getWithMetadata(RULES_KV_KEY, 'text')
    const kv = wrap(env.RULES, {
      getWithMetadata: async (key: string) =>
        key === RULES_KV_KEY ? cached : env.RULES.getWithMetadata(key, 'text'),
    })
    const { get, advance, settle, source } = setup(kv)
    expect(ids(await get())).toEqual(['hand-written'])
    await source.put(kv, doc('put'))
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['put'])
    // Past KV's stale window the same value is an operator's write, and it takes effect.
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['hand-written'])
  })

  it('takes a hand-written document over a pushed one and copies it to last-good', async () => {
    await stamped(RULES_KV_KEY, doc('pushed'), 100)
    await stamped(LAST_GOOD_KV_KEY, doc('pushed'), 100)
    const { get, advance, settle, source } = setup()
    expect(ids(await get())).toEqual(['pushed'])
    await env.RULES.put(RULES_KV_KEY, doc('by-hand'))
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['by-hand'])
    expect(source.status()).toMatchObject({ inForce: 'kv', revision: null })
    const lastGood = await env.RULES.getWithMetadata(LAST_GOOD_KV_KEY, 'text')
    expect(lastGood.value).toBe(doc('by-hand'))
    expect(lastGood.metadata).toMatchObject({ revision: 101 })
    // The pushed revision, still served somewhere, does not come back.
    await stamped(RULES_KV_KEY, doc('pushed'), 100)
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['by-hand'])
  })

  it('does not copy a hand-written document to last-good from a fresh isolate', async () => {
    // A fresh isolate cannot tell an operator's value from KV's stale copy of an older one.
    await env.RULES.put(RULES_KV_KEY, doc('by-hand'))
    const { get } = setup()
    expect(ids(await get())).toEqual(['by-hand'])
    expect(await env.RULES.get(LAST_GOOD_KV_KEY)).toBeNull()
  })

  it('refuses a document that breaks the validator (deep nesting), without throwing', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const nested = `${'{"key":"k","descriptors":['.repeat(10_000)}{"key":"k"}${']}'.repeat(10_000)}`
    const domains = `[{"domain":"d","descriptors":[${nested}]}]`
    await env.RULES.put(RULES_KV_KEY, `{"version":1,"rules":[],"domains":${domains}}`)
    await stamped(LAST_GOOD_KV_KEY, doc('last-good'), 500)
    const { get, source } = setup()
    expect(ids(await get())).toEqual(['last-good'])
    expect(source.status().rejected?.problems.length).toBeGreaterThan(0)
    expect(errors.mock.calls.some((call) => String(call[0]).includes('rules-rejected'))).toBe(true)
  })

  it('takes a newer revision', async () => {
    await stamped(RULES_KV_KEY, doc('one'), 100)
    const { get, advance, settle } = setup()
    expect(ids(await get())).toEqual(['one'])
    await stamped(RULES_KV_KEY, doc('two'), 101)
    advance(30_000)
    await get()
    await settle()
    expect(ids(await get())).toEqual(['two'])
  })
})
