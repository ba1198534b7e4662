import { sign } from 'hono/jwt'
import { describe, expect, it, vi } from 'vitest'
import { verifiedClaims } from '../../../src/http/request/claims'
import { parseRules, type JwtConfig } from '../../../src/rules'
import { client } from '../../support/http'
import { documentProblems } from '../../support/rules'

const SECRET = 'test-only-secret'
const T = 1_900_000_000 // seconds: a fixed "now" for the token dates
const config = (fields: Record<string, unknown> = {}): JwtConfig =>
  parseRules(
    { version: 1, jwt: { alg: 'HS256', secret: 'env:JWT_SECRET', ...fields }, rules: [] },
    't'
  ).jwt!
const request = async (payload: Record<string, unknown>) =>
  new Request('https://example.com/', {
    headers: { authorization: `Bearer ${await sign(payload, SECRET, 'HS256')}` },
  })
const verifiesAt = async (jwt: JwtConfig, payload: Record<string, unknown>, nowS: number) =>
  (await verifiedClaims(await request(payload), jwt, { JWT_SECRET: SECRET }, nowS * 1000)) !==
  undefined

describe('token dates, clock skew and requireExp', () => {
  it.each([
    // [claims, now, without skew, with clockSkew "30s"]
    [{ exp: T }, T - 1, true, true],
    [{ exp: T }, T, false, true],
    [{ exp: T }, T + 29, false, true],
    [{ exp: T }, T + 30, false, false],
    [{ nbf: T }, T, true, true],
    [{ nbf: T }, T - 29, false, true],
    [{ nbf: T }, T - 31, false, false],
    [{ iat: T }, T - 20, false, true],
    [{ iat: T }, T - 40, false, false],
    [{ exp: 'never' }, T, false, false],
  ])('%j at %i: %s without skew, %s with 30s', async (claims, now, plain, skewed) => {
    expect(await verifiesAt(config(), claims, now)).toBe(plain)
    expect(await verifiesAt(config({ clockSkew: '30s' }), claims, now)).toBe(skewed)
  })

  it('refuses a token without exp only when requireExp is set', async () => {
    expect(await verifiesAt(config(), { plan: 'paid' }, T)).toBe(true)
    expect(await verifiesAt(config({ requireExp: true }), { plan: 'paid' }, T)).toBe(false)
    expect(await verifiesAt(config({ requireExp: true }), { exp: T + 60 }, T)).toBe(true)
  })

  it.each([
    [{ clockSkew: '10m' }, 'jwt.clockSkew: must be at most 5m'],
    [
      { clockSkew: 'soon' },
      'jwt.clockSkew: "soon" is not a duration (use "10s", "30s", "1m" or seconds, at most 5m)',
    ],
    [{ requireExp: 'yes' }, 'jwt.requireExp: expected true or false, got "yes"'],
  ])('validates %j', (fields, message) => {
    expect(
      documentProblems({ jwt: { alg: 'HS256', secret: 'env:S', ...fields }, rules: [] })
    ).toEqual([message])
  })
})

const RSA = {
  name: 'RSASSA-PKCS1-v1_5',
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: 'SHA-256',
}
const EC = { name: 'ECDSA', namedCurve: 'P-256' }
const pair = async (params: Parameters<typeof crypto.subtle.generateKey>[0]) =>
  (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair
const pem = async (key: CryptoKey, format: 'spki' | 'pkcs8' = 'spki') => {
  const der = new Uint8Array((await crypto.subtle.exportKey(format, key)) as ArrayBuffer)
  const body = btoa(String.fromCharCode(...der)).replace(/.{64}/g, '$&\n')
  const label = format === 'spki' ? 'PUBLIC KEY' : 'PRIVATE KEY'
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`
}
const keyProblems = (alg: string, publicKey: unknown) =>
  documentProblems({ jwt: { alg, publicKey }, rules: [] })

describe('asymmetric public keys', () => {
  const tiered = (jwt: Record<string, unknown>) =>
    parseRules(
      {
        version: 1,
        jwt,
        rules: [
          {
            id: 'tiers',
            key: ['ip'],
            algorithm: 'sliding-window',
            limit: 1,
            period: '1h',
            tiers: { from: 'claim:plan', limits: { paid: 50 } },
          },
        ],
      },
      't'
    )

  it.each([
    ['RS256', RSA],
    ['ES256', EC],
  ] as const)(
    'verifies %s with a PEM key, imported once per rules document',
    async (alg, params) => {
      const keys = await pair(params)
      const importKey = vi.spyOn(crypto.subtle, 'importKey')
      const send = client({ rules: tiered({ alg, publicKey: await pem(keys.publicKey) }) })
      const token = await sign({ plan: 'paid' }, keys.privateKey, alg)
      for (let i = 1; i <= 3; i++) {
        const response = await send('/x', {
          ip: `198.18.7.${i}`,
          headers: { authorization: `Bearer ${token}` },
        })
        expect(response.headers.get('RateLimit-Policy')).toBe('"tiers";q=50;w=3600')
      }
      expect(importKey).toHaveBeenCalledTimes(1)
      importKey.mockRestore()
    }
  )

  it('refuses garbage, private keys and keys of the wrong kind at validation', async () => {
    const rsa = await pair(RSA)
    const ec = await pair(EC)
    const rsaJwk = (await crypto.subtle.exportKey('jwk', rsa.publicKey)) as JsonWebKey
    const ecJwk = (await crypto.subtle.exportKey('jwk', ec.publicKey)) as JsonWebKey
    const ecPrivate = (await crypto.subtle.exportKey('jwk', ec.privateKey)) as JsonWebKey
    const weak = await pair({ ...RSA, modulusLength: 1024 })
    const cases: [string, unknown, string][] = [
      ['RS256', 'hello', 'is not a PEM public key ("-----BEGIN PUBLIC KEY-----" …)'],
      [
        'RS256',
        '-----BEGIN PUBLIC KEY-----\nnot*base64\n-----END PUBLIC KEY-----',
        'is not a PEM public key ("-----BEGIN PUBLIC KEY-----" …)',
      ],
      [
        'RS256',
        '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
        'has malformed DER in the key',
      ],
      [
        'RS256',
        await pem(rsa.privateKey, 'pkcs8'),
        'is a private key: give only the public key (the rules document is not secret)',
      ],
      [
        'RS256',
        '-----BEGIN RSA PUBLIC KEY-----\nAAAA\n-----END RSA PUBLIC KEY-----',
        'is a PKCS#1 key: give it as "BEGIN PUBLIC KEY" (openssl rsa -RSAPublicKey_in -pubout)',
      ],
      [
        'RS256',
        '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----',
        'is a certificate: give its public key (openssl x509 -pubkey -noout)',
      ],
      ['RS256', await pem(ec.publicKey), 'is an EC key, but "alg" is RS256'],
      ['ES256', await pem(rsa.publicKey), 'is an RSA key, but "alg" is ES256'],
      ['RS256', await pem(weak.publicKey), 'is a 1024-bit RSA key; use at least 2048 bits'],
      ['RS256', { ...rsaJwk, n: undefined }, 'needs "n" as a base64url string'],
      ['RS256', ecJwk, 'needs "kty": "RSA" for RS256'],
      ['ES256', { ...ecJwk, alg: 'ES384' }, 'has "alg" "ES384", not ES256'],
      [
        'ES256',
        ecPrivate,
        'is a private key: give only the public key (the rules document is not secret)',
      ],
      ['ES256', { ...ecJwk, y: ecJwk.x }, 'is not a point on the P-256 curve'],
      ['ES256', { ...ecJwk, x: 'AAAA' }, 'needs "x" and "y" of 32 bytes each'],
    ]
    for (const [alg, key, problem] of cases) {
      const withoutUndefined = typeof key === 'object' ? JSON.parse(JSON.stringify(key)) : key
      expect(keyProblems(alg, withoutUndefined), problem).toEqual([`jwt.publicKey: ${problem}`])
    }
    // A deeply nested JWK is refused before anything recursive walks it (the depth bound).
    let deep: unknown = 'x'
    for (let i = 0; i < 1000; i++) deep = { a: deep }
    expect(keyProblems('ES256', { ...ecJwk, extra: deep })).toEqual([
      expect.stringMatching(/^jwt\.publicKey\.extra(\.a)+: nested deeper than 32 levels$/),
    ])
  })
})
