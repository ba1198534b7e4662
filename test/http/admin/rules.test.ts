import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LAST_GOOD_KV_KEY, RULES_KV_KEY } from '../../../src/provider/rules-source'
import { parseRules } from '../../../src/rules'
import { client } from '../../support/http'
import { clearStoredRules } from '../../support/stored-rules'

const TOKEN = 'admin-rules-token'
const auth = { authorization: `Bearer ${TOKEN}` }
const doc = (id: string) =>
  JSON.stringify({
    version: 1,
    rules: [{ id, key: ['ip'], algorithm: 'fixed-window', limit: 3, period: '1m' }],
  })

interface RulesBody {
  source: string
  inForce: string
  revision: number | null
  updatedAt: string | null
  document: { rules: { id: string }[] }
  rejected?: { source: string; revision: number | null; problems: string[] }
}

/** A fresh app (so a fresh rules source, as in a new isolate) asking GET /rules. */
async function rulesInForce(): Promise<RulesBody> {
  const admin = client({}, { ADMIN_TOKEN: TOKEN })
  const response = await admin('/__ratelimit/rules', { headers: auth })
  expect(response.status).toBe(200)
  return (await response.json()) as RulesBody
}

describe('admin API: which rules document is in force', () => {
  beforeEach(clearStoredRules)
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('GET /rules says the bundled rules are in force while KV has nothing', async () => {
    expect(await rulesInForce()).toMatchObject({
      source: 'rules.json',
      inForce: 'bundled',
      revision: null,
      updatedAt: null,
    })
  })

  it('PUT /rules answers the revision it stored in both keys, and GET /rules shows it', async () => {
    const admin = client({}, { ADMIN_TOKEN: TOKEN })
    const put = await admin('/__ratelimit/rules', { method: 'PUT', headers: auth, body: doc('a') })
    expect(put.status).toBe(200)
    const answer = (await put.json()) as { revision: number; inForce: string; rules: number }
    expect(answer).toMatchObject({ inForce: 'kv', rules: 1 })
    for (const key of [RULES_KV_KEY, LAST_GOOD_KV_KEY]) {
      const stored = await env.RULES.getWithMetadata(key, 'text')
      expect(stored.value).toBe(doc('a'))
      expect(stored.metadata).toMatchObject({ revision: answer.revision })
    }
    const shown = (await (await admin('/__ratelimit/rules', { headers: auth })).json()) as RulesBody
    expect(shown).toMatchObject({ source: 'kv:rules', inForce: 'kv', revision: answer.revision })
    expect(shown.document.rules.map((r) => r.id)).toEqual(['a'])
    // A new isolate reads the same document and revision from KV.
    expect(await rulesInForce()).toMatchObject({ inForce: 'kv', revision: answer.revision })
  })

  it('a new isolate with an invalid `rules` serves last-good, says so, and logs the rejection', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const admin = client({}, { ADMIN_TOKEN: TOKEN })
    const put = await admin('/__ratelimit/rules', {
      method: 'PUT',
      headers: auth,
      body: doc('good'),
    })
    const { revision } = (await put.json()) as { revision: number }
    // An operator writes a broken document by hand.
    await env.RULES.put(RULES_KV_KEY, doc('broken').replace('"limit":3', '"limit":0'))
    const body = await rulesInForce()
    expect(body).toMatchObject({
      source: 'kv:rules:last-good',
      inForce: 'last-good',
      revision,
      rejected: { source: 'kv:rules', revision: null },
    })
    expect(body.document.rules.map((r) => r.id)).toEqual(['good'])
    expect(body.rejected?.problems).toContain('rules[0].limit: 0 must be at least 1')
    const logged = errors.mock.calls.map((call) => JSON.parse(String(call[0])))
    expect(logged).toContainEqual(
      expect.objectContaining({ event: 'rules-rejected', inForce: 'last-good' })
    )
    // The limiter applies last-good, not the bundled rules.
    const limited = await admin('/anything', { ip: '203.0.113.9' })
    expect(limited.headers.get('RateLimit-Policy')).toBe('"good";q=3;w=60')
  })

  it('PUT /rules answers 400 to a document that breaks the validator, and stores nothing', async () => {
    const admin = client({}, { ADMIN_TOKEN: TOKEN })
    const nested = `${'{"key":"k","descriptors":['.repeat(10_000)}{"key":"k"}${']}'.repeat(10_000)}`
    const body = `{"version":1,"rules":[],"domains":[{"domain":"d","descriptors":[${nested}]}]}`
    const put = await admin('/__ratelimit/rules', { method: 'PUT', headers: auth, body })
    expect(put.status).toBe(400)
    expect(await env.RULES.get(RULES_KV_KEY)).toBeNull()
    expect(await env.RULES.get(LAST_GOOD_KV_KEY)).toBeNull()
  })

  it('GET /rules on fixed rules says so', async () => {
    const admin = client(
      { rules: parseRules(JSON.parse(doc('fixed')), 'mine') },
      {
        ADMIN_TOKEN: TOKEN,
      }
    )
    const body = (await (await admin('/__ratelimit/rules', { headers: auth })).json()) as RulesBody
    expect(body).toMatchObject({ source: 'mine', inForce: 'static', revision: null })
  })
})
