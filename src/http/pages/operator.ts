/**
 * @module http/pages/operator
 * The operator page under the admin prefix: `<prefix>/` (HTML), `<prefix>/ui/app.js`,
 * `<prefix>/ui/app.css` and `<prefix>/ui/rehearse.js` (the worker that rehearses a rules change
 * on dropped traffic), built from ui/operator/ into {@link OPERATOR_HTML} and its siblings.
 * They hold no data and are served without the token; everything the page shows it reads from
 * the token-protected admin API. A strict Content-Security-Policy allows only these files: no
 * inline script or style, no other origin, no framing.
 */
import { OPERATOR_CSS, OPERATOR_HTML, OPERATOR_JS, OPERATOR_REHEARSE_JS } from './operator-assets'

/** The policy of the page and its files. */
export const OPERATOR_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ')

/** What each path after the prefix serves. */
const FILES: Record<string, { body: string; type: string }> = {
  '/': { body: OPERATOR_HTML, type: 'text/html; charset=utf-8' },
  '/ui/app.js': { body: OPERATOR_JS, type: 'text/javascript; charset=utf-8' },
  '/ui/app.css': { body: OPERATOR_CSS, type: 'text/css; charset=utf-8' },
  '/ui/rehearse.js': { body: OPERATOR_REHEARSE_JS, type: 'text/javascript; charset=utf-8' },
}

/**
 * The page's answer to a request under the admin prefix, or `undefined` when the path is the
 * API's.
 *
 * @param method - the request's method
 * @param prefix - the `ADMIN_PREFIX` setting
 * @param rest - the path after the prefix, as sent (`""`, `/`, `/ui/app.js`, `/rules`)
 */
export function operatorPage(method: string, prefix: string, rest: string): Response | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined
  // The page's relative URLs (ui/app.js, rules, stats) need the trailing slash.
  if (rest === '') return new Response(null, { status: 308, headers: { Location: `${prefix}/` } })
  const file = FILES[rest]
  if (!file) return undefined
  return new Response(method === 'HEAD' ? null : file.body, {
    headers: {
      'Content-Type': file.type,
      'Content-Security-Policy': OPERATOR_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
      // Revalidated each time: a deploy's new page is never mixed with an old script.
      'Cache-Control': 'no-cache',
    },
  })
}
