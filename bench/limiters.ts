// The rate limiters the bench compares, each a Worker bundle with one Durable Object binding:
// this project (src/, through the admin API), the naive baseline (bench/naive/) and the peer,
// hono-rate-limiter's Durable Object store (bench/peer/). Each is served behind the same
// instrumented entry (instrument.ts), so that calls and alarms are counted the same way.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { LATENCY_BINDING, writeInstrumentedEntry } from './instrument.ts'
import { buildBundle, startWorker, type RulesDocument, type Target } from './targets.ts'

/** The limiters measured beside bare. */
export const LIMITERS = ['project', 'naive', 'peer'] as const
export type LimiterName = (typeof LIMITERS)[number]

/** What a scenario asks of a limiter; each maps it onto its own configuration. */
export interface LimitSpec {
  limit: number
  periodS: number
  /** Only requests under this path are limited (default: all). */
  path?: string
  /** The project's per-rule consistency mode (issue 10's leases); the default is exact. */
  consistency?: 'leased'
  /**
   * The project's watched path: the rule's `nearLimit` is this fraction, its keys are hidden
   * (`showKeys: false`, HMAC under `KEY_HASH_SECRET`) and near-limit alerts are POSTed to the
   * origin (`ALERT_WEBHOOK_URL`); the live view is on in every run.
   */
  nearLimit?: number
}

/** A scenario that cannot run on a target, with the reason shown in the table. */
export class Skip extends Error {}

/** The admin token the project's bench instances are started with. */
const ADMIN_TOKEN = 'bench-admin-token'
/** The npm packages the peer is built from (pinned devDependencies). */
const PEER_PACKAGES = ['hono-rate-limiter', '@hono-rate-limiter/cloudflare']

interface Kind {
  binding: string
  className: string
  useSQLite: boolean
  /** Further Durable Object bindings the Worker needs. */
  moreObjects?: Record<string, { className: string; useSQLite: boolean }>
  /** wrangler config relative to the root; the root's own for the project. */
  config?: string
  /** Why this scenario cannot run here, if it cannot. */
  refuses: (spec: LimitSpec) => string | undefined
  vars: (spec: LimitSpec, origin: string) => Record<string, string>
  configure?: (url: string, spec: LimitSpec) => Promise<void>
  /** When the first idle key created at `createdAtMs` has its cleanup alarm run. */
  firstAlarmDueMs?: (createdAtMs: number, periodMs: number) => number
}

const KINDS: Record<LimiterName, Kind> = {
  project: {
    binding: 'LIMITER',
    className: 'RateLimiterObject',
    useSQLite: true,
    // The live view's stats object, so the metrics' cost is in every run.
    moreObjects: { LIMITER_STATS: { className: 'LiveStatsObject', useSQLite: true } },
    refuses: () => undefined,
    vars: (spec, origin) => projectVars(spec, origin),
    configure: putRules,
    // A sliding-window key's state expires two periods after the start of the window it was
    // last charged in (windows are aligned to multiples of the period).
    firstAlarmDueMs: (createdAtMs, periodMs) => (Math.floor(createdAtMs / periodMs) + 2) * periodMs,
  },
  naive: {
    binding: 'NAIVE',
    className: 'NaiveLimiter',
    useSQLite: true,
    config: 'bench/naive/wrangler.toml',
    refuses: (spec) => refusesRules('the naive limiter', spec),
    vars: (spec) => ({ LIMIT: String(spec.limit), PERIOD_MS: String(spec.periodS * 1000) }),
  },
  peer: {
    binding: 'CACHE',
    className: 'DurableObjectRateLimiter',
    // As its README sets it up: `new_classes`, the key-value storage backend.
    useSQLite: false,
    config: 'bench/peer/wrangler.toml',
    refuses: (spec) => refusesRules('hono-rate-limiter', spec),
    vars: (spec) => ({ LIMIT: String(spec.limit), WINDOW_MS: String(spec.periodS * 1000) }),
    // Its store arms an alarm for the end of each key's fixed window, on the key's first hit.
    firstAlarmDueMs: (createdAtMs, periodMs) => createdAtMs + periodMs,
  },
}

function projectVars(spec: LimitSpec, origin: string): Record<string, string> {
  return {
    // BENCH_METRICS=off measures without metrics and live view (their cost is the difference).
    METRICS: process.env.BENCH_METRICS === 'off' ? 'off' : 'on',
    RULES_REFRESH_SECONDS: '30',
    LIMITER_TIMEOUT_MS: '1000',
    RATE_LIMIT_HEADERS: 'both',
    ADMIN_TOKEN,
    ...(spec.nearLimit === undefined
      ? {}
      : { KEY_HASH_SECRET: 'bench-key-hash-secret', ALERT_WEBHOOK_URL: `${origin}/alerts` }),
  }
}

function refusesRules(who: string, spec: LimitSpec): string | undefined {
  if (spec.consistency !== undefined) return `${who} has no ${spec.consistency} mode`
  if (spec.nearLimit !== undefined) return `${who} has no live view, alerts or hidden keys`
  if (spec.path !== undefined) return `${who} limits every path`
  return undefined
}

/** The limiter kinds whose alarms the alarm scenarios can schedule around. */
export function alarmDueOf(
  name: LimiterName
): ((createdAtMs: number, periodMs: number) => number) | undefined {
  return KINDS[name].firstAlarmDueMs
}

/**
 * Why a limiter cannot be built here, if it cannot: the peer's packages are not installed.
 *
 * @param root - the project root
 */
export function unavailable(name: LimiterName, root: string): string | undefined {
  if (name !== 'peer') return undefined
  const missing = PEER_PACKAGES.filter((pkg) => !existsSync(join(root, 'node_modules', pkg)))
  return missing.length === 0
    ? undefined
    : `not installed: ${missing.join(', ')} (pin them as devDependencies, or pass --peer-bundle)`
}

/**
 * Builds a limiter's bundle into `outdir/<name>` (or takes a prebuilt one) and writes the
 * instrumented entry beside it; returns the entry's path.
 */
export async function buildLimiter(
  name: LimiterName,
  root: string,
  outdir: string,
  prebuilt?: string,
  buildArgs: string[] = []
): Promise<string> {
  const kind = KINDS[name]
  const bundle = prebuilt ?? (await buildBundle(root, join(outdir, name), kind.config, buildArgs))
  return writeInstrumentedEntry(dirname(bundle), {
    bundleFile: bundle,
    binding: kind.binding,
    className: kind.className,
  })
}

/**
 * Starts a fresh instance of a limiter set up for `spec`.
 *
 * @throws {Skip} when the limiter cannot run `spec` (no such mode, or its rules are refused)
 */
export async function startLimiter(
  name: LimiterName,
  entryPath: string,
  origin: string,
  spec: LimitSpec,
  latencyMs: number,
  inspectorPort?: number
): Promise<Target> {
  const kind = KINDS[name]
  const refusal = kind.refuses(spec)
  if (refusal !== undefined) throw new Skip(refusal)
  const target = await startWorker(
    entryPath,
    {
      [kind.binding]: { className: kind.className, useSQLite: kind.useSQLite },
      ...kind.moreObjects,
    },
    { ORIGIN: origin, [LATENCY_BINDING]: String(latencyMs), ...kind.vars(spec, origin) },
    inspectorPort
  )
  try {
    await kind.configure?.(target.url, spec)
    return target
  } catch (error) {
    await target.dispose()
    throw error
  }
}

/** The project's rules for a spec: one sliding-window rule per client address. */
export function rulesFor(spec: LimitSpec): RulesDocument {
  return {
    version: 1,
    rules: [
      {
        id: 'bench',
        match: { path: spec.path ?? '/*' },
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: spec.limit,
        period: `${spec.periodS}s`,
        ...(spec.consistency === undefined ? {} : { consistency: spec.consistency }),
        ...(spec.nearLimit === undefined ? {} : { nearLimit: spec.nearLimit, showKeys: false }),
      },
    ],
  }
}

const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` }

// Through the admin API rather than straight into KV: a document the Worker refuses (a field
// this build does not know yet) is reported here instead of the bundled rules being measured.
async function putRules(url: string, spec: LimitSpec): Promise<void> {
  const response = await fetch(new URL('/__ratelimit/rules', url), {
    method: 'PUT',
    headers: { ...adminHeaders, 'content-type': 'application/json' },
    body: JSON.stringify(rulesFor(spec)),
  })
  if (response.ok) return
  const body = (await response.json().catch(() => ({}))) as { errors?: string[]; detail?: string }
  const why = body.errors?.join('; ') ?? body.detail ?? `status ${response.status}`
  throw new Skip(`the Worker refused the rules: ${why}`)
}

/**
 * The project's own count of Durable Object calls (`GET /__ratelimit/stats`), or undefined
 * where that endpoint does not exist yet or has no such count.
 */
export async function ownDurableObjectCalls(
  name: LimiterName,
  url: string
): Promise<number | undefined> {
  if (name !== 'project') return undefined
  try {
    const response = await fetch(new URL('/__ratelimit/stats', url), { headers: adminHeaders })
    if (!response.ok) return undefined
    const stats = (await response.json()) as { durableObjectCalls?: unknown }
    return typeof stats.durableObjectCalls === 'number' ? stats.durableObjectCalls : undefined
  } catch {
    return undefined
  }
}
