/**
 * @module http/shared/cors-policy
 * The CORS setting (`CORS_ORIGINS` or `rateLimit({ cors })`) checked and compiled once, where the
 * settings are read; `../request/cors.ts` applies the compiled policy to the limiter's answers.
 */

/** How the limiter answers cross-origin requests: `off`, `*`, `mirror`, or exact origins. */
export type CorsSetting = 'off' | '*' | 'mirror' | readonly string[]

/** A {@link CorsSetting} checked and compiled once. */
export type CorsPolicy =
  { mode: 'off' | 'any' | 'mirror' } | { mode: 'list'; origins: ReadonlySet<string> }

/** No CORS headers (the default). */
export const CORS_OFF: CorsPolicy = { mode: 'off' }

/**
 * Compiles a setting.
 *
 * @param setting - `off`, `*`, `mirror`, or the exact origins (`https://app.example.com`)
 * @param name - what the setting is called, for the error message
 * @throws {TypeError} for an empty list, or an entry that is not an http(s) origin exactly as
 *   browsers send it (lower case, no path, no default port)
 */
export function corsPolicy(setting: CorsSetting, name: string): CorsPolicy {
  if (setting === 'off') return CORS_OFF
  if (setting === '*') return { mode: 'any' }
  if (setting === 'mirror') return { mode: 'mirror' }
  if (typeof setting === 'string' || setting.length === 0)
    throw new TypeError(`${name}: ${JSON.stringify(setting)} is not off, *, mirror or origins`)
  for (const origin of setting) {
    if (!isOrigin(origin))
      throw new TypeError(
        `${name}: ${JSON.stringify(origin)} is not an origin as browsers send it (https://app.example.com)`
      )
  }
  return { mode: 'list', origins: new Set(setting) }
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value
  } catch {
    return false
  }
}
