/**
 * @module rules/jwt
 * How tokens whose claims choose tiers are verified. The secret itself never sits in the rules
 * document (which anyone with KV read access sees): it names a Worker secret, `env:NAME`.
 */
import * as v from 'valibot'
import { headerName, objectMessage, show, text, type Issue } from './schema-parts'

/** `jwt` as written. */
export const JwtSchema = v.pipe(
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
          [text('a PEM public key'), v.record(v.string(), v.unknown())],
          (i: Issue) => `expected a PEM public key or a JWK, got ${show(i.input)}`
        )
      ),
      header: v.optional(headerName, 'authorization'),
      issuer: v.optional(text('a string')),
      audience: v.optional(text('a string')),
    },
    objectMessage('a jwt object')
  ),
  v.check(
    (jwt) => (jwt.alg === 'HS256' ? jwt.secret !== undefined : jwt.publicKey !== undefined),
    'HS256 needs "secret": "env:<NAME>"; RS256 and ES256 need "publicKey"'
  )
)

/** Validated JWT settings. */
export type JwtConfig = v.InferOutput<typeof JwtSchema>
