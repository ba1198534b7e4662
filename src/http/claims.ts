/**
 * @module http/claims
 * The claims of a request's JWT, only when it verifies: a forged, expired or not-yet-valid token
 * yields no claims, so it can never raise a tier.
 */
import { verify } from 'hono/jwt'
import type { JwtConfig } from '../rules'

type VerifyKey = Parameters<typeof verify>[1]

const warned = new Set<string>()

/**
 * Verifies the request's token with the configured algorithm and key and returns its claims.
 *
 * @param request - the incoming request
 * @param jwt - the rules document's `jwt` settings
 * @param env - the Worker's env, where an HS256 secret named `env:NAME` lives
 * @returns the claims, or `undefined` when there is no token or it does not verify
 */
export async function verifiedClaims(
  request: Request,
  jwt: JwtConfig,
  env: object | undefined
): Promise<Record<string, unknown> | undefined> {
  const raw = request.headers.get(jwt.header)
  if (!raw) return undefined
  const token = jwt.header === 'authorization' ? raw.replace(/^Bearer\s+/i, '') : raw.trim()
  const key = signingKey(jwt, env)
  if (key === undefined) return undefined
  try {
    const claims = await verify(token, key, {
      alg: jwt.alg,
      ...(jwt.issuer === undefined ? {} : { iss: jwt.issuer }),
      ...(jwt.audience === undefined ? {} : { aud: jwt.audience }),
    })
    return claims as Record<string, unknown>
  } catch {
    return undefined
  }
}

function signingKey(jwt: JwtConfig, env: object | undefined): VerifyKey | undefined {
  if (jwt.alg !== 'HS256') return jwt.publicKey as VerifyKey
  const name = jwt.secret!.slice('env:'.length)
  const secret = (env as Record<string, unknown> | undefined)?.[name]
  if (typeof secret === 'string' && secret !== '') return secret
  if (!warned.has(name)) {
    warned.add(name)
    console.error(JSON.stringify({ event: 'jwt-secret-missing', secret: name }))
  }
  return undefined
}
