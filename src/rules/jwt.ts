/**
 * @module rules/jwt
 * How tokens whose claims choose tiers (or key rules) are verified. A secret never sits in the
 * rules document (which anyone with KV read access sees): it names a Worker secret,
 * `env:NAME`. A public key is checked here, so a key that cannot be imported is refused with
 * the document instead of quietly verifying nothing.
 */
import * as v from 'valibot'
import { checkPublicKey } from './public-key'
import type { CheckedJwtSettings, JwtSettings } from './document'
import { duration, headerName, named, objectMessage, show, text, type Issue } from './schema-parts'

/** The largest clock-skew allowance: more would keep an expired token valid for long. */
export const MAX_CLOCK_SKEW_MS = 300_000

/** A JWK's members: the known ones typed, any other a flat value (so no deep nesting). */
const Jwk = v.objectWithRest(
  {
    kty: v.optional(v.string()),
    n: v.optional(v.string()),
    e: v.optional(v.string()),
    crv: v.optional(v.string()),
    x: v.optional(v.string()),
    y: v.optional(v.string()),
  },
  // Optional: a JWK exported by WebCrypto, passed as an object, has its unused members undefined.
  v.optional(v.union([v.string(), v.number(), v.boolean(), v.array(v.string())])),
  (i: Issue) => `expected a PEM public key or a JWK, got ${show(i.input)}`
)

type PublicKeyInput = string | Record<string, unknown>

/** The problem of a `publicKey` for its `alg`, if any. */
function keyProblem(jwt: { alg: string; publicKey?: PublicKeyInput }): string | undefined {
  if (jwt.alg === 'HS256' || jwt.publicKey === undefined) return undefined
  const checked = checkPublicKey(jwt.alg as 'RS256' | 'ES256', jwt.publicKey)
  return 'problem' in checked ? checked.problem : undefined
}

/** `jwt` as written. */
export const JwtSchema = named<JwtSettings, CheckedJwtSettings>()(
  v.pipe(
    v.strictObject(
      {
        alg: v.picklist(
          ['HS256', 'RS256', 'ES256'],
          (i: Issue) => `${show(i.input)} is not "HS256", "RS256" or "ES256"`
        ),
        secret: v.optional(
          v.pipe(
            text('"env:<SECRET_NAME>"'),
            v.regex(
              /^env:[A-Za-z_][A-Za-z0-9_]*$/,
              (i: Issue) => `${show(i.input)} must name a Worker secret as "env:<NAME>"`
            )
          )
        ),
        publicKey: v.optional(
          v.union(
            [text('a PEM public key'), Jwk],
            (i: Issue) => `expected a PEM public key or a JWK, got ${show(i.input)}`
          )
        ),
        header: v.optional(headerName, 'authorization'),
        issuer: v.optional(text('a string')),
        audience: v.optional(text('a string')),
        requireExp: v.optional(
          v.boolean((i: Issue) => `expected true or false, got ${show(i.input)}`),
          false
        ),
        // The default goes through the schema too, so 0 must pass it (no duration is 0).
        clockSkew: v.optional(
          v.union(
            [v.literal(0), v.pipe(duration, v.maxValue(MAX_CLOCK_SKEW_MS, 'must be at most 5m'))],
            (i: Issue) =>
              `${show(i.input)} is not a duration (use "10s", "30s", "1m" or seconds, at most 5m)`
          ),
          0
        ),
      },
      objectMessage('a jwt object')
    ),
    v.check(
      (jwt) => (jwt.alg === 'HS256' ? jwt.secret !== undefined : jwt.publicKey !== undefined),
      'HS256 needs "secret": "env:<NAME>"; RS256 and ES256 need "publicKey"'
    ),
    v.forward(
      v.check(
        (jwt) => keyProblem(jwt) === undefined,
        (i: Issue) => keyProblem(i.input as { alg: string; publicKey?: PublicKeyInput }) ?? ''
      ),
      ['publicKey']
    ),
    v.transform((jwt): CheckedJwtSettings => {
      if (jwt.alg === 'HS256' || jwt.publicKey === undefined) return jwt
      const checked = checkPublicKey(jwt.alg, jwt.publicKey)
      return 'material' in checked ? { ...jwt, key: checked.material } : jwt
    })
  )
)

/** Validated JWT settings; `key` is the checked public key of RS256 and ES256. */
export type JwtConfig = CheckedJwtSettings
