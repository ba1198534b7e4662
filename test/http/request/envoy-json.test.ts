import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseRules } from '../../../src/rules'
import { freezeClock } from '../../support/clock'
import { client } from '../../support/http'

const TOKEN = 'envoy-test-token'
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

const rules = parseRules(
  {
    version: 1,
    rules: [],
    domains: [
      {
        domain: 'messaging',
        descriptors: [
          {
            key: 'message_type',
            value: 'marketing',
            descriptors: [
              {
                key: 'to_number',
                rate_limit: { unit: 'day', requests_per_unit: 2, name: 'marketing' },
              },
            ],
          },
          { key: 'to_number', rate_limit: { unit: 'day', requests_per_unit: 100 } },
          { key: 'ldap', rate_limit: { unlimited: true } },
          { key: 'blocked', rate_limit: { unit: 'second', requests_per_unit: 0 } },
          { key: 'quiet', shadow_mode: true, rate_limit: { unit: 'minute', requests_per_unit: 1 } },
        ],
      },
    ],
  },
  'test'
)

const send = client({ rules }, { DECISION_TOKEN: TOKEN })
const decide = async (body: unknown, headers: Record<string, string> = auth) => {
  const response = await send('/json', {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const marketing = (number: string) => ({
  entries: [
    { key: 'message_type', value: 'marketing' },
    { key: 'to_number', value: number },
  ],
})

describe('POST /json (envoyproxy/ratelimit HTTP API)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('answers OK, then OVER_LIMIT with a 429, in proto3 JSON', async () => {
    const nowMs = freezeClock()
    const request = {
      domain: 'messaging',
      descriptors: [
        marketing('2061111111'),
        { entries: [{ key: 'to_number', value: '2061111111' }] },
      ],
    }
    const first = await decide(request)
    expect(first.status).toBe(200)
    expect(first.body).toEqual({
      overallCode: 'OK',
      statuses: [
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 2, unit: 'DAY', name: 'marketing' },
          limitRemaining: 1,
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 100, unit: 'DAY' },
          limitRemaining: 99,
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
      ],
    })
    await decide(request)
    const third = await decide(request)
    expect(third.status).toBe(429)
    expect(third.body).toEqual({
      overallCode: 'OVER_LIMIT',
      statuses: [
        {
          code: 'OVER_LIMIT',
          currentLimit: { requestsPerUnit: 2, unit: 'DAY', name: 'marketing' },
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 100, unit: 'DAY' },
          limitRemaining: 97,
          durationUntilReset: expect.stringMatching(/^\d+s$/),
        },
      ],
    })
    const seconds = Number(
      String(
        (third.body.statuses as { durationUntilReset: string }[])[0]!.durationUntilReset
      ).slice(0, -1)
    )
    // Envoy's reset: the rest of the current day, in whole seconds.
    expect(seconds).toBe(86_400 - (Math.floor(nowMs / 1000) % 86_400))
  })

  it('answers OK without a limit for descriptors nothing matches, and for unknown domains', async () => {
    expect(
      (
        await decide({
          domain: 'messaging',
          descriptors: [{ entries: [{ key: 'nothing', value: 'x' }] }],
        })
      ).body
    ).toEqual({ overallCode: 'OK', statuses: [{ code: 'OK' }] })
    expect(
      (
        await decide({
          domain: 'elsewhere',
          descriptors: [{ entries: [{ key: 'to_number', value: '1' }] }],
        })
      ).body
    ).toEqual({ overallCode: 'OK', statuses: [{ code: 'OK' }] })
  })

  it('unlimited, requests_per_unit 0 and shadow_mode behave as in envoyproxy/ratelimit', async () => {
    const { status, body } = await decide({
      domain: 'messaging',
      descriptors: [
        { entries: [{ key: 'ldap', value: 'a' }] },
        { entries: [{ key: 'blocked', value: 'a' }] },
      ],
    })
    expect(status).toBe(429)
    expect(body.statuses).toEqual([
      { code: 'OK', limitRemaining: 4294967295 },
      { code: 'OVER_LIMIT', currentLimit: { unit: 'SECOND' }, durationUntilReset: '1s' },
    ])
    await decide({
      domain: 'messaging',
      descriptors: [{ entries: [{ key: 'quiet', value: 'q' }] }],
    })
    const shadow = await decide({
      domain: 'messaging',
      descriptors: [{ entries: [{ key: 'quiet', value: 'q' }] }],
    })
    expect(shadow.status).toBe(200)
    expect(shadow.body).toMatchObject({
      overallCode: 'OK',
      statuses: [{ code: 'OK', currentLimit: { requestsPerUnit: 1, unit: 'MINUTE' } }],
    })
  })

  it('takes hits_addend per request and per descriptor, in snake_case or lowerCamel, 0 to only look', async () => {
    const entries = [{ key: 'to_number', value: '2069999999' }]
    expect(
      (await decide({ domain: 'messaging', hits_addend: 10, descriptors: [{ entries }] })).body
        .statuses
    ).toMatchObject([{ limitRemaining: 90 }])
    expect(
      (await decide({ domain: 'messaging', descriptors: [{ entries, hitsAddend: '5' }] })).body
        .statuses
    ).toMatchObject([{ limitRemaining: 85 }])
    expect(
      (await decide({ domain: 'messaging', descriptors: [{ entries, hits_addend: 0 }] })).body
        .statuses
    ).toMatchObject([{ limitRemaining: 85 }])
  })

  it('takes a limit override from the request', async () => {
    const { body } = await decide({
      domain: 'messaging',
      descriptors: [
        {
          entries: [{ key: 'to_number', value: '2068888888' }],
          limit: { requestsPerUnit: 7, unit: 'HOUR' },
        },
      ],
    })
    expect(body.statuses).toMatchObject([
      { code: 'OK', currentLimit: { requestsPerUnit: 7, unit: 'HOUR' }, limitRemaining: 6 },
    ])
  })

  it('counts an override in another unit apart, and one in the same unit with the configured limit', async () => {
    const entries = [{ key: 'to_number', value: '2067777777' }]
    const remaining = async (limit?: { requestsPerUnit: number; unit: string }) => {
      const { body } = await decide({
        domain: 'messaging',
        descriptors: [{ entries, ...(limit && { limit }) }],
      })
      return (body.statuses as { limitRemaining: number }[])[0]!.limitRemaining
    }
    expect([await remaining(), await remaining(), await remaining()]).toEqual([99, 98, 97])
    expect(await remaining({ requestsPerUnit: 7, unit: 'HOUR' })).toBe(6)
    // The configured DAY counter is still at 3, not wiped by the HOUR window.
    expect(await remaining()).toBe(96)
    expect(await remaining({ requestsPerUnit: 7, unit: 'HOUR' })).toBe(5)
    // Like envoyproxy/ratelimit (descriptor + unit window): the same unit is the same counter.
    expect(await remaining({ requestsPerUnit: 1000, unit: 'DAY' })).toBe(995)
    expect(await remaining()).toBe(94)
  })

  it.each([
    ['not JSON', '{"domain":', 'The body is not JSON'],
    [
      'an unknown field',
      { domain: 'messaging', descriptors: [], extra: 1 },
      'unknown field "extra"',
    ],
    [
      'an empty domain',
      { domain: '', descriptors: [{ entries: [] }] },
      'rate limit domain must not be empty',
    ],
    [
      'no descriptors',
      { domain: 'messaging', descriptors: [] },
      'rate limit descriptor list must not be empty',
    ],
    [
      'a bad hits_addend',
      { domain: 'messaging', descriptors: [{ entries: [], hits_addend: -1 }] },
      'descriptors[0].hits_addend must be a whole number',
    ],
    [
      'a bad unit',
      {
        domain: 'messaging',
        descriptors: [{ entries: [], limit: { requests_per_unit: 1, unit: 'FORTNIGHT' } }],
      },
      'unknown unit "FORTNIGHT"',
    ],
    [
      'a field given twice',
      { domain: 'messaging', descriptors: [{ entries: [] }], hits_addend: 1, hitsAddend: 2 },
      'is given twice',
    ],
  ])('answers 400 for %s', async (_label, body, detail) => {
    const result = await decide(body)
    expect(result.status).toBe(400)
    expect(String(result.body.detail)).toContain(detail)
  })

  it('needs DECISION_TOKEN, not the admin token', async () => {
    const request = { domain: 'messaging', descriptors: [marketing('1')] }
    expect((await decide(request, { 'content-type': 'application/json' })).status).toBe(401)
    const both = client({ rules }, { DECISION_TOKEN: TOKEN, ADMIN_TOKEN: 'the-admin-token' })
    const asAdmin = await both('/json', {
      method: 'POST',
      headers: { authorization: 'Bearer the-admin-token' },
      body: JSON.stringify(request),
    })
    expect(asAdmin.status).toBe(401)
    expect(await asAdmin.json()).toMatchObject({
      detail: 'A valid "Authorization: Bearer <DECISION_TOKEN>" is required.',
    })
    const asCaller = await both('/json', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(request),
    })
    expect(asCaller.status).toBe(200)
  })

  it('is not served without Envoy domains, and never forwards its token', async () => {
    const plain = client(
      { rules: parseRules({ version: 1, rules: [] }, 't') },
      { DECISION_TOKEN: TOKEN, ORIGIN: 'demo' }
    )
    const withToken = await plain('/json', { method: 'POST', headers: auth, body: '{}' })
    expect(withToken.status).toBe(400)
    expect(withToken.headers.get('x-demo-origin')).toBeNull()
    expect(await withToken.text()).not.toContain(TOKEN)
    const other = { authorization: 'Bearer the-origins-own' }
    const forwarded = await plain('/json', { method: 'POST', headers: other, body: '{}' })
    expect(forwarded.headers.get('x-demo-origin')).toBe('1')
    expect(await forwarded.json()).toMatchObject({ headers: other })
  })
})

describe('an imported Envoy configuration (examples/envoy/messaging.json)', () => {
  it("answers the README's example 2 request as envoyproxy/ratelimit would", async () => {
    const { default: imported } = await import('../../../examples/envoy/messaging.json')
    const sendImported = client(
      { rules: parseRules(imported, 'examples/envoy/messaging.json') },
      { DECISION_TOKEN: TOKEN }
    )
    const request = {
      domain: 'messaging',
      descriptors: [
        {
          entries: [
            { key: 'message_type', value: 'marketing' },
            { key: 'to_number', value: '2061234567' },
          ],
        },
        { entries: [{ key: 'to_number', value: '2061234567' }] },
      ],
    }
    const bodies: unknown[] = []
    for (let i = 0; i < 6; i++) {
      const response = await sendImported('/json', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(request),
      })
      bodies.push({ status: response.status, ...((await response.json()) as object) })
    }
    const reset = expect.stringMatching(/^\d+s$/)
    expect(bodies[0]).toEqual({
      status: 200,
      overallCode: 'OK',
      statuses: [
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 5, unit: 'DAY' },
          limitRemaining: 4,
          durationUntilReset: reset,
        },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 100, unit: 'DAY' },
          limitRemaining: 99,
          durationUntilReset: reset,
        },
      ],
    })
    // The sixth marketing message to one number in a day is over; the per-number limit is not.
    expect(bodies[5]).toEqual({
      status: 429,
      overallCode: 'OVER_LIMIT',
      statuses: [
        {
          code: 'OVER_LIMIT',
          currentLimit: { requestsPerUnit: 5, unit: 'DAY' },
          durationUntilReset: reset,
        },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 100, unit: 'DAY' },
          limitRemaining: 94,
          durationUntilReset: reset,
        },
      ],
    })
  })
})
