import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RULES_KV_KEY } from '../../../src/provider/rules-source'
import { parseRules } from '../../../src/rules'
import { client } from '../../support/http'

const TOKEN = 'deep-test-token'
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
/** `{"k":{"k":…1…}}`, `depth` objects deep, as text. */
const nested = (depth: number) => `${'{"k":'.repeat(depth)}1${'}'.repeat(depth)}`
const deepJwk = `{"version":1,"rules":[],"jwt":{"alg":"RS256","publicKey":${nested(100_000)}}}`

describe('deeply nested documents and bodies', () => {
  beforeEach(async () => {
    await env.RULES.delete(RULES_KV_KEY)
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('PUT /rules answers 400 to a JWK nested 100,000 levels; GET /rules keeps working', async () => {
    const admin = client({}, { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' })
    const put = await admin('/__ratelimit/rules', { method: 'PUT', headers: auth, body: deepJwk })
    expect(put.status).toBe(400)
    const { errors } = (await put.json()) as { errors: string[] }
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(/^jwt\.publicKey\.k(\.k)+: nested deeper than 32 levels$/)
    const get = await admin('/__ratelimit/rules', { headers: auth })
    expect(get.status).toBe(200)
    expect(await get.json()).toMatchObject({ source: 'rules.json' })
  })

  it('a deep document in KV is logged as rules-rejected and the rules in hand stay', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    await env.RULES.put(RULES_KV_KEY, deepJwk)
    const send = client({}, { ORIGIN: 'demo' })
    const response = await send('/x', { ip: '192.0.2.200' })
    expect(response.status).toBe(200)
    const events = logged.mock.calls.map(
      ([line]) => JSON.parse(String(line)) as Record<string, unknown>
    )
    expect(events).toContainEqual(
      expect.objectContaining({
        event: 'rules-rejected',
        problems: [
          expect.stringMatching(/^jwt\.publicKey\.k(\.k)+: nested deeper than 32 levels$/),
        ],
      })
    )
  })

  it('POST /json answers 400 to a body nested deeper than 32 levels', async () => {
    const rules = parseRules(
      {
        version: 1,
        rules: [],
        domains: [
          {
            domain: 'd',
            descriptors: [{ key: 'k', rate_limit: { unit: 'day', requests_per_unit: 5 } }],
          },
        ],
      },
      't'
    )
    const send = client({ rules }, { DECISION_TOKEN: TOKEN })
    const body = `{"domain":"d","descriptors":[{"entries":[{"key":"k","value":${nested(5_000)}}]}]}`
    const response = await send('/json', { method: 'POST', headers: auth, body })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      detail: expect.stringMatching(
        /^descriptors\[0\]\.entries\[0\]\.value(\.k)+: nested deeper than 32 levels$/
      ),
    })
  })

  it('POST /explain answers 400 to a body nested deeper than 32 levels', async () => {
    const admin = client({}, { ADMIN_TOKEN: TOKEN })
    const body = `{"url":"https://x.test/","headers":{"a":${nested(5_000)}}}`
    const response = await admin('/__ratelimit/explain', { method: 'POST', headers: auth, body })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      errors: [expect.stringMatching(/^headers\.a(\.k)+: nested deeper than 32 levels$/)],
    })
  })
})
