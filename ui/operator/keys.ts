/**
 * @module ui/keys
 * Limit keys as the limiter stores them (`<rule>|<part>|…`, each part percent-encoded): shown
 * decoded, and turned into the admin path that resets them.
 */

/** The encoded parts of a stored key of `rule` (a key not in that form is one raw value). */
function encodedParts(rule: string, key: string): string[] {
  const head = `${rule}|`
  if (key.startsWith(head)) return key.slice(head.length).split('|')
  return [encodeURIComponent(key)]
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/**
 * Whether a key is shown as stored (`<rule>|…`) and can be reset from the page; a rule with
 * `showKeys` off reports only a hash of it (`hmac:…`).
 */
export function isStoredKey(rule: string, key: string): boolean {
  return key.startsWith(`${rule}|`)
}

/** A key's parts, decoded, for display (as text, never as HTML). */
export function keyLabel(rule: string, key: string): string {
  return encodedParts(rule, key).map(decode).join(' | ')
}

/** The admin API path of a key: `keys/<rule>/<part>/…`. */
export function keyPath(rule: string, key: string): string {
  return ['keys', encodeURIComponent(rule), ...encodedParts(rule, key)].join('/')
}
