import { describe, expect, it } from 'vitest'
import { CORS_OFF } from '../../../src/http/shared/cors-policy'
import { DEFAULT_SETTINGS, readSettings } from '../../../src/http/shared/settings'

describe('readSettings', () => {
  it('uses the defaults when nothing is set', () => {
    expect(readSettings(undefined)).toEqual(DEFAULT_SETTINGS)
    expect(readSettings({})).toEqual(DEFAULT_SETTINGS)
  })

  it('parses the vars wrangler passes as strings, and numbers', () => {
    expect(
      readSettings({
        ORIGIN: ' https://o.example ',
        RULES_REFRESH_SECONDS: '5',
        LIMITER_TIMEOUT_MS: 250,
        RATE_LIMIT_HEADERS: 'IETF',
        METHOD_OVERRIDE: ' Strip',
        METRICS: 'OFF',
        LIVE_FLUSH_SECONDS: '0',
        ALERT_WEBHOOK_URL: ' https://alerts.example/hook ',
        LIMITED_BURST_KEYS: '3',
        CORS_ORIGINS: ' https://app.example , http://localhost:8080',
      })
    ).toEqual({
      origin: 'https://o.example',
      rulesRefreshMs: 5_000,
      limiterTimeoutMs: 250,
      headers: 'ietf',
      adminPrefix: '/__ratelimit',
      decisionPath: '/json',
      methodOverride: 'strip',
      metrics: 'off',
      liveFlushMs: 0,
      alertWebhookUrl: 'https://alerts.example/hook',
      limitedBurstKeys: 3,
      cors: { mode: 'list', origins: new Set(['https://app.example', 'http://localhost:8080']) },
    })
  })

  it.each([
    [{ RULES_REFRESH_SECONDS: 'soon' }, 'rulesRefreshMs', 30_000],
    [{ RULES_REFRESH_SECONDS: '0' }, 'rulesRefreshMs', 30_000],
    [{ RULES_REFRESH_SECONDS: '7200' }, 'rulesRefreshMs', 30_000],
    [{ LIMITER_TIMEOUT_MS: '-1' }, 'limiterTimeoutMs', 1_000],
    [{ RATE_LIMIT_HEADERS: 'all' }, 'headers', 'both'],
    [{ METHOD_OVERRIDE: 'ignore' }, 'methodOverride', 'count'],
    [{ METRICS: 'sometimes' }, 'metrics', 'on'],
    [{ LIVE_FLUSH_SECONDS: '-5' }, 'liveFlushMs', 5_000],
    [{ ALERT_WEBHOOK_URL: 'ftp://alerts.example' }, 'alertWebhookUrl', ''],
    [{ LIMITED_BURST_KEYS: '0' }, 'limitedBurstKeys', 10],
    [{ CORS_ORIGINS: 'https://app.example/' }, 'cors', CORS_OFF],
    [{ CORS_ORIGINS: 'https://App.example' }, 'cors', CORS_OFF],
    [{ CORS_ORIGINS: 'https://app.example:443' }, 'cors', CORS_OFF],
    [{ CORS_ORIGINS: 'https://a.example,,https://b.example' }, 'cors', CORS_OFF],
    [{ CORS_ORIGINS: 'null' }, 'cors', CORS_OFF],
    [{ CORS_ORIGINS: 'off' }, 'cors', CORS_OFF],
  ])('falls back to the default for a bad value: %j', (vars, field, expected) => {
    expect(readSettings(vars)[field as keyof typeof DEFAULT_SETTINGS]).toBe(expected)
  })

  it.each([
    ['', { mode: 'off' }],
    ['*', { mode: 'any' }],
    [' Mirror ', { mode: 'mirror' }],
  ])('reads CORS_ORIGINS=%j', (value, cors) => {
    expect(readSettings({ CORS_ORIGINS: value }).cors).toEqual(cors)
  })

  it('parses an env object once', () => {
    const env = { RULES_REFRESH_SECONDS: '9' }
    expect(readSettings(env)).toBe(readSettings(env))
  })
})
