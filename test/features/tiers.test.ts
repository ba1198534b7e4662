import { sign } from 'hono/jwt'
import { describe, expect, it } from 'vitest'
import { parseRules } from '../../src/rules'
import { client, parseRateLimit } from '../support/http'
import { documentProblems } from '../support/rules'

const SECRET = 'test-only-secret'
const NOW_S = () => Math.floor(Date.now() / 1000)

/** Typical API tiers: free 100/h, paid 1000/h, enterprise 10000/h. */
const tiered = (from: string, jwt?: Record<string, unknown>) =>
  parseRules(
    {
      version: 1,
      ...(jwt ? { jwt } : {}),
      rules: [
        {
          id: 'api-tiers',
          key: ['ip'],
          algorithm: 'sliding-window',
          limit: 100,
          period: '1h',
          tiers: { from, limits: { free: 100, paid: 1000, enterprise: 10000 } },
        },
      ],
    },
    'test'
  )

let host = 1
const quotaFor = async (send: ReturnType<typeof client>, headers: Record<string, string>) => {
  const response = await send('/x', { ip: `198.18.0.${host++}`, headers })
  return response.headers.get('RateLimit-Policy')
}

describe('tiers from a header', () => {
  const send = client({ rules: tiered('header:x-plan') })

  it.each([
    ['free', '"api-tiers";q=100;w=3600'],
    ['paid', '"api-tiers";q=1000;w=3600'],
    ['enterprise', '"api-tiers";q=10000;w=3600'],
    ['platinum', '"api-tiers";q=100;w=3600'],
  ])('tier %s gets %s', async (plan, policy) => {
    expect(await quotaFor(send, { 'x-plan': plan })).toBe(policy)
  })

  it("a missing tier gets the rule's own limit", async () => {
    expect(await quotaFor(send, {})).toBe('"api-tiers";q=100;w=3600')
  })
})

describe('tiers from a verified JWT claim', () => {
  const hs = client(
    { rules: tiered('claim:plan', { alg: 'HS256', secret: 'env:JWT_SECRET' }) },
    { JWT_SECRET: SECRET }
  )
  const bearer = async (payload: Record<string, unknown>, secret = SECRET) => ({
    authorization: `Bearer ${await sign(payload, secret, 'HS256')}`,
  })

  it('a valid HS256 token raises the tier', async () => {
    expect(await quotaFor(hs, await bearer({ plan: 'paid', exp: NOW_S() + 60 }))).toBe(
      '"api-tiers";q=1000;w=3600'
    )
  })

  it.each([
    ['a bad signature', () => bearer({ plan: 'enterprise' }, 'not-the-secret')],
    ['an expired token', () => bearer({ plan: 'enterprise', exp: NOW_S() - 10 })],
    ['a token not valid yet', () => bearer({ plan: 'enterprise', nbf: NOW_S() + 600 })],
    [
      'an unsigned token',
      async () => ({
        authorization: `Bearer ${btoa('{"alg":"none"}')}.${btoa('{"plan":"enterprise"}')}.`,
      }),
    ],
    ['garbage', async () => ({ authorization: 'Bearer not.a.token' })],
  ])('%s never raises the tier', async (_label, headers) => {
    expect(await quotaFor(hs, await headers())).toBe('"api-tiers";q=100;w=3600')
  })

  it('without the Worker secret, no token is trusted', async () => {
    const unset = client(
      { rules: tiered('claim:plan', { alg: 'HS256', secret: 'env:JWT_SECRET' }) },
      { JWT_SECRET: '' }
    )
    expect(await quotaFor(unset, await bearer({ plan: 'paid' }))).toBe('"api-tiers";q=100;w=3600')
  })

  it.each([
    [
      'RS256',
      {
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: 'SHA-256',
      },
    ],
    ['ES256', { name: 'ECDSA', namedCurve: 'P-256' }],
  ] as const)('verifies %s with a public key (JWK) in the rules', async (alg, params) => {
    const pair = (await crypto.subtle.generateKey(params, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair
    const publicKey = await crypto.subtle.exportKey('jwk', pair.publicKey)
    const send = client({ rules: tiered('claim:plan', { alg, publicKey }) })
    const good = await sign({ plan: 'enterprise' }, pair.privateKey, alg)
    expect(await quotaFor(send, { authorization: `Bearer ${good}` })).toBe(
      '"api-tiers";q=10000;w=3600'
    )
    const other = (await crypto.subtle.generateKey(params, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair
    const forged = await sign({ plan: 'enterprise' }, other.privateKey, alg)
    expect(await quotaFor(send, { authorization: `Bearer ${forged}` })).toBe(
      '"api-tiers";q=100;w=3600'
    )
  })

  it('counts one key across tiers: a new tier changes the limit, not the counter', async () => {
    const send = client({ rules: tiered('header:x-plan') })
    const ip = '198.18.1.1'
    await send('/x', { ip, headers: { 'x-plan': 'free' } })
    const paid = await send('/x', { ip, headers: { 'x-plan': 'paid' } })
    expect(parseRateLimit(paid.headers.get('RateLimit'))['api-tiers']?.r).toBe(998)
  })
})

describe('validation of tiers and jwt', () => {
  const rule = (tiers: unknown) => ({
    id: 'r',
    key: [],
    algorithm: 'sliding-window',
    limit: 1,
    period: 1,
    tiers,
  })

  it.each([
    [
      { rules: [rule({ from: 'claim:plan', limits: { paid: 2 } })] },
      'rules[0].tiers.from: a claim needs the document\'s "jwt" settings',
    ],
    [
      { rules: [rule({ from: 'cookie:plan', limits: { paid: 2 } })] },
      'rules[0].tiers.from: "cookie:plan" is not "header:<name>" or "claim:<name>"',
    ],
    [
      { rules: [rule({ from: 'header:x-plan', limits: {} })] },
      'rules[0].tiers.limits: must name at least one tier',
    ],
    [
      { rules: [rule({ from: 'header:x-plan', limits: { paid: 0 } })] },
      'rules[0].tiers.limits.paid: 0 must be at least 1',
    ],
    [
      { jwt: { alg: 'HS256', secret: 'hunter2' }, rules: [] },
      'jwt.secret: "hunter2" must name a Worker secret as "env:<NAME>"',
    ],
    [
      { jwt: { alg: 'RS256' }, rules: [] },
      'jwt: HS256 needs "secret": "env:<NAME>"; RS256 and ES256 need "publicKey"',
    ],
    [
      { jwt: { alg: 'none', secret: 'env:X' }, rules: [] },
      'jwt.alg: "none" is not "HS256", "RS256" or "ES256"',
    ],
  ])('%j', (document, message) => {
    expect(documentProblems(document)).toEqual([message])
  })
})
