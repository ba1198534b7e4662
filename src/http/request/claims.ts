/**
 * @module http/request/claims
 * The claims of a request's JWT, only when it verifies: a forged, expired or not-yet-valid token
 * yields no claims, so it can never raise a tier or choose a key.
 */
import { verify } from 'hono/jwt'
import type { JwtConfig } from '../../rules'
import { logEvent } from '../../log'

type VerifyKey = Parameters<typeof verify>[1]

const warned = new Set<string>()

/** Public keys imported once per isolate and rules document (the config object is per parse). */
const imported = new WeakMap<JwtConfig, Promise<CryptoKey | undefined>>()

const IMPORT_ALGORITHM = {
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
} as const

/**
 * Verifies the request's token with the configured algorithm and key and returns its claims.
 * Signature, `iss` and `aud` are checked by hono; `exp`, `nbf` and `iat` here, allowing
 * `clockSkew` either way, and a token without `exp` is refused when `requireExp` is set.
 *
 * @param request - the incoming request
 * @param jwt - the rules document's `jwt` settings
 * @param env - the Worker's env, where an HS256 secret named `env:NAME` lives
 * @param nowMs - the current time
 * @returns the claims, or `undefined` when there is no token or it does not verify
 */
export async function verifiedClaims(
  request: Request,
  jwt: JwtConfig,
  env: object | undefined,
  nowMs: number = Date.now()
): Promise<Record<string, unknown> | undefined> {
  const raw = request.headers.get(jwt.header)
  if (!raw) return undefined
  const token = jwt.header === 'authorization' ? raw.replace(/^Bearer\s+/i, '') : raw.trim()
  const key = await verifyKey(jwt, env)
  if (key === undefined) return undefined
  let claims: Record<string, unknown>
  try {
    claims = await verify(token, key, {
      alg: jwt.alg,
      exp: false,
      nbf: false,
      iat: false,
      ...(jwt.issuer === undefined ? {} : { iss: jwt.issuer }),
      ...(jwt.audience === undefined ? {} : { aud: jwt.audience }),
    })
  } catch {
    return undefined
  }
  return inTime(claims, jwt, nowMs) ? claims : undefined
}

/** Whether the token's dates hold at `nowMs`, give or take the clock skew. */
function inTime(claims: Record<string, unknown>, jwt: JwtConfig, nowMs: number): boolean {
  const now = nowMs / 1000
  const skew = jwt.clockSkew / 1000
  const date = (name: string) => {
    const value = claims[name]
    if (value === undefined) return undefined
    return typeof value === 'number' && Number.isFinite(value) ? value : Number.NaN
  }
  const exp = date('exp')
  const nbf = date('nbf')
  const iat = date('iat')
  if (exp === undefined ? jwt.requireExp : !(now < exp + skew)) return false
  if (nbf !== undefined && !(nbf <= now + skew)) return false
  if (iat !== undefined && !(iat <= now + skew)) return false
  return true
}

async function verifyKey(jwt: JwtConfig, env: object | undefined): Promise<VerifyKey | undefined> {
  if (jwt.alg === 'HS256') return secret(jwt, env)
  let key = imported.get(jwt)
  if (key === undefined) {
    key = importKey(jwt)
    imported.set(jwt, key)
  }
  return key
}

async function importKey(jwt: JwtConfig): Promise<CryptoKey | undefined> {
  const algorithm = IMPORT_ALGORITHM[jwt.alg as 'RS256' | 'ES256']
  try {
    const { format, keyData } = jwt.key!
    return format === 'jwk'
      ? await crypto.subtle.importKey('jwk', keyData, algorithm, false, ['verify'])
      : await crypto.subtle.importKey('spki', keyData, algorithm, false, ['verify'])
  } catch (error) {
    // Validation checked the key's structure; a key the runtime still refuses is logged once.
    logEvent('error', 'jwt-key-unusable', { alg: jwt.alg, error: String(error) })
    return undefined
  }
}

function secret(jwt: JwtConfig, env: object | undefined): string | undefined {
  const name = jwt.secret!.slice('env:'.length)
  const value = (env as Record<string, unknown> | undefined)?.[name]
  if (typeof value === 'string' && value !== '') return value
  if (!warned.has(name)) {
    warned.add(name)
    logEvent('error', 'jwt-secret-missing', { secret: name })
  }
  return undefined
}
