/**
 * @module limiter/object-name
 * Durable Object names for limit keys, bounded in length.
 */

/** Names longer than this are replaced by a digest. */
export const MAX_OBJECT_NAME_LENGTH = 256

/**
 * The Durable Object name for a limit key. Short keys are used as they are (readable in logs
 * and the dashboard); long ones become `<rule id>|#<SHA-256, base64url>`, so a client sending
 * a huge header cannot make names unbounded.
 *
 * @param ruleId - the rule's id (the part before the first `|`)
 * @param key - the full limit key from `limitKey()`
 */
export async function objectName(ruleId: string, key: string): Promise<string> {
  if (key.length <= MAX_OBJECT_NAME_LENGTH) return key
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key))
  return `${ruleId}|#${base64Url(new Uint8Array(digest))}`
}

function base64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
