/**
 * @module ui/api
 * The admin API as the page calls it: paths relative to the page (which is served at the
 * admin prefix), the token from sessionStorage as a bearer header, never in a URL.
 */

const TOKEN_KEY = 'edge-rate-limiter:admin-token'

/** A non-2xx answer, with its problem+json body when there is one. */
export class ApiError extends Error {
  /**
   * @param status - the response status
   * @param problem - the parsed body, if it was JSON
   */
  constructor(
    readonly status: number,
    readonly problem: Record<string, unknown> | null
  ) {
    super(typeof problem?.detail === 'string' ? `${status}: ${problem.detail}` : `HTTP ${status}`)
  }

  /** The `errors` member of a 400 (`"<path>: <message>"` each), if any. */
  get errors(): string[] {
    const errors = this.problem?.errors
    return Array.isArray(errors) ? errors.map(String) : []
  }
}

/** The token kept for this tab, if any. */
export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY)
}

/** Keeps (or, with `null`, forgets) the token for this tab. */
export function setToken(value: string | null): void {
  if (value === null) sessionStorage.removeItem(TOKEN_KEY)
  else sessionStorage.setItem(TOKEN_KEY, value)
}

/**
 * Calls the admin API.
 *
 * @param path - relative to the admin prefix (`rules`, `keys/<rule>/<value>`)
 * @param init - method and body
 * @throws {ApiError} for any non-2xx answer
 */
export async function api<T = Record<string, unknown>>(
  path: string,
  init: { method?: string; body?: string } = {}
): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token() ?? ''}` }
  if (init.body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(path, {
    ...init,
    headers,
    cache: 'no-store',
    credentials: 'omit',
    redirect: 'error',
  })
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null
  if (!response.ok) throw new ApiError(response.status, body)
  return body as T
}
