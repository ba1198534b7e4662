/**
 * @module http/shared/settings
 * The Worker's vars, parsed with defaults. A bad value falls back to the default with a
 * warning instead of taking the limiter down.
 */

import { CORS_OFF, corsPolicy, type CorsPolicy } from './cors-policy'
import { logEvent } from '../../log'

/** Which rate-limit headers responses carry. */
export type HeaderMode = 'both' | 'legacy' | 'ietf' | 'none'

/**
 * What happens to method-override headers (`X-HTTP-Method-Override`, …) and `?_method=`:
 * `count` them as the method they name as well, or `strip` them before the origin.
 */
export type MethodOverrideMode = 'count' | 'strip'

/** Whether decisions are counted (Analytics Engine, live view, near-limit events): `on` or `off`. */
export type MetricsMode = 'on' | 'off'

/** Parsed settings. */
export interface Settings {
  /** Base URL of the origin, `"demo"`, or empty for the zone's own origin. */
  origin: string
  /** How long an isolate keeps its copy of the rules before re-reading KV. */
  rulesRefreshMs: number
  /** The longest wait for a Durable Object decision. */
  limiterTimeoutMs: number
  /** Which headers to send. */
  headers: HeaderMode
  /** Path prefix of the admin API. */
  adminPrefix: string
  /** Path of envoyproxy/ratelimit's `/json` decision endpoint. */
  decisionPath: string
  /** What happens to method overrides. */
  methodOverride: MethodOverrideMode
  /** Whether decisions are counted at all. */
  metrics: MetricsMode
  /** Least time between an isolate's flushes to the live stats object (0: after every request). */
  liveFlushMs: number
  /** Where near-limit and limited-burst events are POSTed, if anywhere. */
  alertWebhookUrl: string
  /** A rule limiting more keys than this within a minute (in one isolate) is a limited burst. */
  limitedBurstKeys: number
  /** CORS for the limiter's own answers, and the rate-limit headers exposed on the origin's. */
  cors: CorsPolicy
}

/** Defaults for every setting. */
export const DEFAULT_SETTINGS: Settings = {
  origin: '',
  rulesRefreshMs: 30_000,
  limiterTimeoutMs: 1000,
  headers: 'both',
  adminPrefix: '/__ratelimit',
  decisionPath: '/json',
  methodOverride: 'count',
  metrics: 'on',
  liveFlushMs: 5000,
  alertWebhookUrl: '',
  limitedBurstKeys: 10,
  cors: CORS_OFF,
}

/** The vars the settings are read from (all optional: library users may set none). */
export interface SettingsVars {
  ORIGIN?: string
  RULES_REFRESH_SECONDS?: string | number
  LIMITER_TIMEOUT_MS?: string | number
  RATE_LIMIT_HEADERS?: string
  ADMIN_PREFIX?: string
  DECISION_PATH?: string
  METHOD_OVERRIDE?: string
  METRICS?: string
  LIVE_FLUSH_SECONDS?: string | number
  ALERT_WEBHOOK_URL?: string
  LIMITED_BURST_KEYS?: string | number
  CORS_ORIGINS?: string
}

const HEADER_MODES: readonly HeaderMode[] = ['both', 'legacy', 'ietf', 'none']
const OVERRIDE_MODES: readonly MethodOverrideMode[] = ['count', 'strip']
const METRICS_MODES: readonly MetricsMode[] = ['on', 'off']
const warned = new Set<string>()

// The env object lives as long as the isolate, so its vars are parsed once, not per request.
const parsed = new WeakMap<SettingsVars, Settings>()

/**
 * Reads the settings from a Worker's vars.
 *
 * @param vars - `c.env`
 */
export function readSettings(vars: SettingsVars | undefined): Settings {
  if (!vars) return DEFAULT_SETTINGS
  let settings = parsed.get(vars)
  if (!settings) {
    settings = parseSettings(vars)
    parsed.set(vars, settings)
  }
  return settings
}

function parseSettings(vars: SettingsVars): Settings {
  return {
    origin: (vars.ORIGIN ?? '').trim(),
    rulesRefreshMs:
      1000 *
      numberVar(
        'RULES_REFRESH_SECONDS',
        vars.RULES_REFRESH_SECONDS,
        1,
        3600,
        DEFAULT_SETTINGS.rulesRefreshMs / 1000
      ),
    limiterTimeoutMs: numberVar(
      'LIMITER_TIMEOUT_MS',
      vars.LIMITER_TIMEOUT_MS,
      1,
      60_000,
      DEFAULT_SETTINGS.limiterTimeoutMs
    ),
    headers: oneOf('RATE_LIMIT_HEADERS', vars.RATE_LIMIT_HEADERS, HEADER_MODES),
    methodOverride: oneOf('METHOD_OVERRIDE', vars.METHOD_OVERRIDE, OVERRIDE_MODES),
    metrics: oneOf('METRICS', vars.METRICS, METRICS_MODES),
    liveFlushMs:
      1000 *
      numberVar(
        'LIVE_FLUSH_SECONDS',
        vars.LIVE_FLUSH_SECONDS,
        0,
        300,
        DEFAULT_SETTINGS.liveFlushMs / 1000
      ),
    alertWebhookUrl: urlVar('ALERT_WEBHOOK_URL', vars.ALERT_WEBHOOK_URL),
    limitedBurstKeys: numberVar(
      'LIMITED_BURST_KEYS',
      vars.LIMITED_BURST_KEYS,
      1,
      100_000,
      DEFAULT_SETTINGS.limitedBurstKeys
    ),
    adminPrefix: pathVar('ADMIN_PREFIX', vars.ADMIN_PREFIX, DEFAULT_SETTINGS.adminPrefix),
    decisionPath: pathVar('DECISION_PATH', vars.DECISION_PATH, DEFAULT_SETTINGS.decisionPath),
    cors: corsVar('CORS_ORIGINS', vars.CORS_ORIGINS),
  }
}

function numberVar(
  name: string,
  value: string | number | undefined,
  min: number,
  max: number,
  fallback: number
): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (Number.isFinite(n) && n >= min && n <= max) return n
  warnOnce(
    name,
    `${name}=${JSON.stringify(value)} is not a number from ${min} to ${max}; using ${fallback}`
  )
  return fallback
}

/** A var with a fixed set of values; the first is the default. */
function oneOf<T extends string>(name: string, value: string | undefined, modes: readonly T[]): T {
  const fallback = modes[0]!
  if (value === undefined || value === '') return fallback
  const mode = value.trim().toLowerCase() as T
  if (modes.includes(mode)) return mode
  warnOnce(
    name,
    `${name}=${JSON.stringify(value)} is not one of ${modes.join(', ')}; using ${fallback}`
  )
  return fallback
}

function pathVar(name: string, value: string | undefined, fallback: string): string {
  if (value === undefined || value === '') return fallback
  const path = value.trim().replace(/\/+$/, '')
  if (/^\/[A-Za-z0-9._~\-/]+$/.test(path)) return path
  warnOnce(
    name,
    `${name}=${JSON.stringify(value)} is not a path like ${fallback}; using ${fallback}`
  )
  return fallback
}

function urlVar(name: string, value: string | undefined): string {
  const url = (value ?? '').trim()
  if (url === '' || /^https?:\/\/[^\s]+$/.test(url)) return url
  warnOnce(name, `${name}=${JSON.stringify(value)} is not an http(s) URL; sending no alerts`)
  return ''
}

/** Empty for off, `*`, `mirror`, or origins separated by commas. */
function corsVar(name: string, value: string | undefined): CorsPolicy {
  const text = (value ?? '').trim()
  if (text === '') return CORS_OFF
  if (text === '*') return corsPolicy('*', name)
  if (text.toLowerCase() === 'mirror') return corsPolicy('mirror', name)
  try {
    return corsPolicy(
      text.split(',').map((origin) => origin.trim()),
      name
    )
  } catch (error) {
    // A bad list leaves CORS off, as it was, rather than guessing which origins were meant.
    warnOnce(name, `${(error as Error).message}; CORS stays off`)
    return CORS_OFF
  }
}

function warnOnce(name: string, message: string): void {
  if (warned.has(name)) return
  warned.add(name)
  logEvent('warn', 'bad-setting', { setting: name, message })
}
