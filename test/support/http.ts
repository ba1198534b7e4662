/**
 * @module test/support/http
 * Helpers for driving the app in workerd.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { createApp } from '../../src/app'
import type { RateLimitOptions } from '../../src/http/request/rate-limit'
import { parseRules, type RuleSet } from '../../src/rules'

/** A rule set from plain rule objects. */
export function rules(...items: Record<string, unknown>[]): RuleSet {
  return parseRules({ version: 1, rules: items }, 'test')
}

/** Builds the proxy app with `options` and sends one request through it (a path on example.com, or a whole URL). */
export function client(
  options: Partial<RateLimitOptions> = {},
  vars: Record<string, unknown> = {}
) {
  const app = createApp(options)
  return async (path: string, init: RequestInit & { ip?: string } = {}): Promise<Response> => {
    const headers = new Headers(init.headers)
    if (init.ip) headers.set('cf-connecting-ip', init.ip)
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request(/^https?:/.test(path) ? path : `https://example.com${path}`, {
        ...init,
        headers,
      }),
      { ...env, ...vars },
      ctx
    )
    await waitOnExecutionContext(ctx)
    return response
  }
}

/** The `RateLimit` field as `{ policy: { r, t } }` (`t` NaN where it is left out). */
export function parseRateLimit(value: string | null): Record<string, { r: number; t: number }> {
  const out: Record<string, { r: number; t: number }> = {}
  for (const item of (value ?? '').split(',').filter(Boolean)) {
    const [name, ...params] = item.trim().split(';')
    const fields = Object.fromEntries(params.map((p) => p.split(/=(.*)/s) as [string, string]))
    out[JSON.parse(name!) as string] = { r: Number(fields.r), t: Number(fields.t) }
  }
  return out
}
