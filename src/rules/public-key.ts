/**
 * @module rules/public-key
 * The structure of a JWT public key, checked when the rules are validated: WebCrypto's import is
 * asynchronous and validation is not, so the key is read here far enough that a key that cannot
 * be imported is a validation error, not a silent default tier on every request.
 */

/** What `crypto.subtle.importKey` takes for a checked key. */
export type KeyMaterial =
  { format: 'spki'; keyData: Uint8Array } | { format: 'jwk'; keyData: JsonWebKey }

/** The outcome of {@link checkPublicKey}: what to import, or what is wrong. */
export type CheckedKey = { material: KeyMaterial } | { problem: string }

const MIN_RSA_BITS = 2048
const MAX_RSA_BITS = 16384
const OID_RSA = '2a864886f70d010101'
const OID_EC = '2a8648ce3d0201'
const OID_P256 = '2a8648ce3d030107'
// P-256 (FIPS 186-4 D.1.2.3): y² = x³ - 3x + b over GF(p).
const P = 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn

/**
 * Checks a `publicKey` (PEM text or a JWK) for the configured algorithm.
 *
 * @param alg - `RS256` or `ES256`
 * @param key - the validated `publicKey`
 * @returns the material to import, or the problem (without the field path)
 */
export function checkPublicKey(
  alg: 'RS256' | 'ES256',
  key: string | Record<string, unknown>
): CheckedKey {
  try {
    return { material: typeof key === 'string' ? fromPem(alg, key) : fromJwk(alg, key) }
  } catch (error) {
    if (error instanceof KeyProblem) return { problem: error.message }
    throw error
  }
}

class KeyProblem extends Error {}

function fail(message: string): never {
  throw new KeyProblem(message)
}

function fromPem(alg: 'RS256' | 'ES256', pem: string): KeyMaterial {
  const label = /^-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem.trim())?.[1]
  if (label?.includes('PRIVATE'))
    fail('is a private key: give only the public key (the rules document is not secret)')
  if (label === 'RSA PUBLIC KEY')
    fail('is a PKCS#1 key: give it as "BEGIN PUBLIC KEY" (openssl rsa -RSAPublicKey_in -pubout)')
  if (label === 'CERTIFICATE')
    fail('is a certificate: give its public key (openssl x509 -pubkey -noout)')
  const body = /^-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----$/.exec(
    pem.trim()
  )?.[1]
  if (body === undefined) fail('is not a PEM public key ("-----BEGIN PUBLIC KEY-----" …)')
  const der = decodeBase64(body.replace(/\s+/g, ''), 'the PEM body')
  const spki = new Der(der).read(0x30, 'the key')
  const info = new Der(spki)
  const algorithm = new Der(info.read(0x30, 'the algorithm'))
  const oid = hex(algorithm.read(0x06, 'the algorithm'))
  const bits = info.read(0x03, 'the key bits')
  info.end()
  if (bits[0] !== 0) fail('has a malformed key bit string')
  const keyBytes = bits.subarray(1)
  if (oid === OID_RSA) {
    if (alg !== 'RS256') fail(`is an RSA key, but "alg" is ${alg}`)
    const rsa = new Der(new Der(keyBytes).read(0x30, 'the RSA key'))
    checkRsa(rsa.read(0x02, 'the modulus'), rsa.read(0x02, 'the exponent'))
    rsa.end()
  } else if (oid === OID_EC) {
    if (alg !== 'ES256') fail(`is an EC key, but "alg" is ${alg}`)
    if (hex(algorithm.read(0x06, 'the curve')) !== OID_P256) fail('is not on the P-256 curve')
    if (keyBytes.length !== 65 || keyBytes[0] !== 4) fail('is not an uncompressed P-256 point')
    checkPoint(keyBytes.subarray(1, 33), keyBytes.subarray(33))
  } else fail(`is neither an RSA nor an EC key`)
  return { format: 'spki', keyData: der }
}

function fromJwk(alg: 'RS256' | 'ES256', jwk: Record<string, unknown>): KeyMaterial {
  if (jwk.d !== undefined)
    fail('is a private key: give only the public key (the rules document is not secret)')
  if (jwk.alg !== undefined && jwk.alg !== alg)
    fail(`has "alg" ${JSON.stringify(jwk.alg)}, not ${alg}`)
  if (jwk.use !== undefined && jwk.use !== 'sig') fail('has "use" other than "sig"')
  if (Array.isArray(jwk.key_ops) && !jwk.key_ops.includes('verify'))
    fail('has "key_ops" without "verify"')
  const kty = alg === 'RS256' ? 'RSA' : 'EC'
  if (jwk.kty !== kty) fail(`needs "kty": "${kty}" for ${alg}`)
  if (kty === 'RSA') {
    checkRsa(base64Url(jwk.n, '"n"'), base64Url(jwk.e, '"e"'))
    return { format: 'jwk', keyData: { kty, n: jwk.n as string, e: jwk.e as string } }
  }
  if (jwk.crv !== 'P-256') fail('needs "crv": "P-256" for ES256')
  const x = base64Url(jwk.x, '"x"')
  const y = base64Url(jwk.y, '"y"')
  if (x.length !== 32 || y.length !== 32) fail('needs "x" and "y" of 32 bytes each')
  checkPoint(x, y)
  return { format: 'jwk', keyData: { kty, crv: 'P-256', x: jwk.x as string, y: jwk.y as string } }
}

function checkRsa(modulus: Uint8Array, exponent: Uint8Array): void {
  const n = unsigned(modulus)
  const bits = n === 0n ? 0 : n.toString(2).length
  if (bits < MIN_RSA_BITS) fail(`is a ${bits}-bit RSA key; use at least ${MIN_RSA_BITS} bits`)
  if (bits > MAX_RSA_BITS) fail(`is a ${bits}-bit RSA key; at most ${MAX_RSA_BITS} bits`)
  const e = unsigned(exponent)
  if (n % 2n === 0n || e % 2n === 0n || e < 3n || e >= 2n ** 32n) fail('is not a valid RSA key')
}

function checkPoint(xBytes: Uint8Array, yBytes: Uint8Array): void {
  const x = unsigned(xBytes)
  const y = unsigned(yBytes)
  const onCurve = x < P && y < P && (y * y - (x * x * x - 3n * x + B)) % P === 0n
  if (!onCurve) fail('is not a point on the P-256 curve')
}

/** A minimal DER reader: definite lengths, one level at a time. */
class Der {
  private at = 0
  constructor(private readonly bytes: Uint8Array) {}

  read(tag: number, what: string): Uint8Array {
    const bad = () => fail(`has malformed DER in ${what}`)
    if (this.bytes[this.at] !== tag) bad()
    let length = this.bytes[this.at + 1] ?? bad()
    let start = this.at + 2
    if (length & 0x80) {
      const count = length & 0x7f
      if (count < 1 || count > 3) bad()
      length = 0
      for (let i = 0; i < count; i++) length = length * 256 + (this.bytes[start + i] ?? bad())
      start += count
    }
    if (start + length > this.bytes.length) bad()
    this.at = start + length
    return this.bytes.subarray(start, start + length)
  }

  end(): void {
    if (this.at !== this.bytes.length) fail('has trailing bytes')
  }
}

function decodeBase64(text: string, what: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
  } catch {
    fail(`has invalid base64 in ${what}`)
  }
}

function base64Url(value: unknown, what: string): Uint8Array {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value))
    fail(`needs ${what} as a base64url string`)
  const padded = value.replace(/-/g, '+').replace(/_/g, '/')
  return decodeBase64(padded + '='.repeat((4 - (padded.length % 4)) % 4), what)
}

function unsigned(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${hex(bytes)}`)
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}
