import { env } from 'cloudflare:workers'
import { beforeEach, describe, expect, it } from 'vitest'
import { KvRulesSource, RULES_KV_KEY, type RulesContext } from '../../src/provider/rules-source'
import { parseRules, type RuleSet } from '../../src/rules'

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
    get: () => source.get(context),
    advance: (ms: number) => (nowMs += ms),
    settle: () => Promise.all(pending.splice(0)),
  }
}

const ids = (ruleSet: RuleSet) => ruleSet.rules.map((r) => r.id)

/** Counts reads on the real namespace. */
function counting(kv: KVNamespace): { kv: KVNamespace; reads: () => number } {
  let reads = 0
  const wrapped = { get: (key: string) => (reads++, kv.get(key)) }
  return { kv: wrapped as unknown as KVNamespace, reads: () => reads }
}

describe('KvRulesSource', () => {
  beforeEach(async () => {
    await env.RULES.delete(RULES_KV_KEY)
  })

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
    const kv = {
      get: (key: string) =>
        fail ? Promise.reject(new Error('KV unavailable')) : env.RULES.get(key),
    }
    const { get, advance, settle } = setup(kv as unknown as KVNamespace)
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
