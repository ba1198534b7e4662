import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { UNENFORCED_HEADER } from '../../src/http/request/rate-limit'
import {
  FIRST_READ_WAIT_MS,
  KvRulesSource,
  kvRules,
  RULES_KV_KEY,
  type RulesContext,
} from '../../src/provider/rules-source'
import { parseRules } from '../../src/rules'
import { client } from '../support/http'

// Fault injection for the rules in KV: reads that fail or are slow, through the rules source's
// public `get()` and through the app. Writes go to the real namespace.

type Fault = 'none' | 'fails' | 'slow'

/** The RULES namespace with reads that fail, or wait for `land()`; `reads` counts them. */
function faultyKv() {
  let fault: Fault = 'none'
  let reads = 0
  const waiting: (() => void)[] = []
  const kv = new Proxy(env.RULES, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown
      if (typeof value !== 'function') return value
      if (!['get', 'getWithMetadata'].includes(String(property))) return value.bind(target)
      return async (...args: unknown[]) => {
        reads++
        if (fault === 'fails') throw new Error('KV GET failed: 503 Service Unavailable')
        if (fault === 'slow') await new Promise<void>((resolve) => waiting.push(resolve))
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return {
    kv,
    set: (next: Fault) => (fault = next),
    reads: () => reads,
    land: () => waiting.splice(0).forEach((resolve) => resolve()),
  }
}

const doc = (id: string, failMode: 'open' | 'closed', limit = 2) => ({
  version: 1,
  rules: [{ id, key: ['ip'], algorithm: 'fixed-window', limit, period: '1h', failMode }],
})

let error: MockInstance<typeof console.error>
beforeEach(async () => {
  await env.RULES.delete(RULES_KV_KEY)
  error = vi.spyOn(console, 'error').mockImplementation(() => {})
  vi.spyOn(console, 'log').mockImplementation(() => {})
})
afterEach(() => vi.restoreAllMocks())

const logged = (event: string) =>
  error.mock.calls.some(([line]) => String(line).includes(`"event":"${event}"`))

describe.each(['open', 'closed'] as const)('KV faults, rules failing %s', (failMode) => {
  it('a failing read keeps the rules in force and logs rules-refresh-failed', async () => {
    const { kv, set } = faultyKv()
    await env.RULES.put(RULES_KV_KEY, JSON.stringify(doc(`from-kv-${failMode}`, failMode)))
    const source = kvRules(parseRules(doc('defaults', failMode), 'defaults'))
    const pending: Promise<unknown>[] = []
    // Refresh on every call, so each get() after the first reads KV in the background.
    const context: RulesContext = { kv, refreshMs: 0, waitUntil: (p) => pending.push(p) }
    expect((await source.get(context)).rules[0]!.id).toBe(`from-kv-${failMode}`)
    await Promise.all(pending.splice(0))
    set('fails')
    for (let i = 0; i < 3; i++) {
      expect((await source.get(context)).rules[0]!.id).toBe(`from-kv-${failMode}`)
      await Promise.allSettled(pending.splice(0))
    }
    expect(logged('rules-refresh-failed')).toBe(true)
  })

  it('a slow read holds up no request once rules are in force', async () => {
    const { kv, set, land } = faultyKv()
    await env.RULES.put(RULES_KV_KEY, JSON.stringify(doc(`kept-${failMode}`, failMode)))
    const source = kvRules(parseRules(doc('defaults', failMode), 'defaults'))
    const pending: Promise<unknown>[] = []
    const context: RulesContext = { kv, refreshMs: 0, waitUntil: (p) => pending.push(p) }
    await source.get(context)
    await Promise.all(pending.splice(0))
    set('slow')
    // The read below never lands before land(): a get() that waited for it would never resolve.
    expect(await source.get(context)).toMatchObject({ rules: [{ id: `kept-${failMode}` }] })
    land()
    await Promise.all(pending.splice(0))
  })

  it('a first read that hangs holds requests at most FIRST_READ_WAIT_MS, then the bundled rules serve until it lands', async () => {
    const { kv, set, land } = faultyKv()
    await env.RULES.put(RULES_KV_KEY, JSON.stringify(doc(`late-${failMode}`, failMode)))
    set('slow')
    const waits: number[] = []
    let elapse = (): void => {}
    const wait = (ms: number) => {
      waits.push(ms)
      return new Promise<void>((resolve) => (elapse = resolve))
    }
    const source = new KvRulesSource(
      () => parseRules(doc('bundled', failMode), 'bundled'),
      Date.now,
      wait
    )
    const pending: Promise<unknown>[] = []
    const context: RulesContext = { kv, refreshMs: 60_000, waitUntil: (p) => pending.push(p) }
    const first = source.get(context)
    await vi.waitFor(() => expect(waits).toEqual([FIRST_READ_WAIT_MS]))
    elapse()
    expect((await first).rules[0]!.id).toBe('bundled')
    expect(logged('rules-read-slow')).toBe(false) // a log line, not an error
    land()
    await Promise.all(pending.splice(0))
    expect((await source.get(context)).rules[0]!.id).toBe(`late-${failMode}`)
  })

  it('through the app, KV down from the start: the defaults are enforced, not failed', async () => {
    const { kv, set } = faultyKv()
    set('fails')
    const send = client(
      { rules: kvRules(parseRules(doc(`defaults-${failMode}`, failMode), 'defaults')) },
      { RULES: kv }
    )
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      const response = await send('/x', { ip: `203.0.113.${failMode === 'open' ? 60 : 61}` })
      statuses.push(response.status)
      expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
      expect(response.headers.get('X-RateLimit-Limit')).toBe('2')
    }
    expect(statuses).toEqual([200, 200, 429])
    expect(logged('rules-refresh-failed')).toBe(true)
  })

  it('through the app, a slow first read: requests wait for it together, then its rules apply', async () => {
    const { kv, set, land, reads } = faultyKv()
    await env.RULES.put(RULES_KV_KEY, JSON.stringify(doc(`slow-${failMode}`, failMode)))
    set('slow')
    const send = client(
      { rules: kvRules(parseRules(doc('defaults', failMode, 100), 'defaults')) },
      { RULES: kv }
    )
    const ip = `203.0.113.${failMode === 'open' ? 62 : 63}`
    const responses = Array.from({ length: 3 }, () => send('/x', { ip }))
    await vi.waitFor(() => expect(reads()).toBe(1))
    land()
    const answered = await Promise.all(responses)
    expect(answered.map((r) => r.headers.get('X-RateLimit-Limit'))).toEqual(['2', '2', '2'])
    expect(answered.map((r) => r.status).sort()).toEqual([200, 200, 429])
    expect(reads()).toBe(1)
  })
})
