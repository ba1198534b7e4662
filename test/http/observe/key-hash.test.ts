import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { KeyHasher, keyHasher } from '../../../src/http/observe/key-hash'

const hmacHex = async (secret: string, text: string) => {
  const encoder = new TextEncoder()
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign']
  )
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)))
  return [...mac.slice(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

describe('hidden keys', () => {
  it('are an HMAC-SHA-256 prefix under KEY_HASH_SECRET, and change when it is rotated', async () => {
    const key = 'login|203.0.113.7'
    const hidden = await keyHasher('secret-one', env.LIMITER).hidden(key)
    expect(hidden).toBe(`hmac:${await hmacHex('secret-one', key)}`)
    expect(await keyHasher('secret-two', env.LIMITER).hidden(key)).not.toBe(hidden)
  })

  it('without a secret, are keyed by the LIMITER namespace: the same in every isolate of a deployment', async () => {
    const key = 'login|203.0.113.7'
    const hidden = await keyHasher(undefined, env.LIMITER).hidden(key)
    // Another isolate builds its own hasher from the same namespace and finds the same hash.
    const elsewhere = new KeyHasher(env.LIMITER.idFromName('#key-hash').toString())
    expect(await elsewhere.hidden(key)).toBe(hidden)
    // Another namespace (another deployment) hashes differently.
    expect(await keyHasher(undefined, env.FLAKY_LIMITER).hidden(key)).not.toBe(hidden)
    // And no plain SHA-256 of the key, which a guess would reproduce.
    const plain = new Uint8Array(
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key))
    )
    const plainHex = [...plain.slice(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join('')
    expect(hidden).not.toContain(plainHex)
  })
})
