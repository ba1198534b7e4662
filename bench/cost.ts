// What a million requests cost in each scenario, from the Durable Object calls per request the
// bench measured, at Cloudflare's published prices, beside the same traffic through a hosted
// Redis limiter (Upstash pay-as-you-go with @upstash/ratelimit's sliding window).
//
// Prices (USD, paid plans, beyond the included monthly allowances), as published on:
// - https://developers.cloudflare.com/workers/platform/pricing/ (Workers Standard):
//   $0.30 per million requests, $0.02 per million CPU ms.
// - https://developers.cloudflare.com/durable-objects/platform/pricing/ : requests (every RPC
//   method call on a stub is one, and so is every alarm invocation) $0.15 per million; duration
//   $12.50 per million GB-s, billed at 128 MB per active object; SQLite-backed storage, rows
//   written $1.00 per million.
// - https://upstash.com/pricing/redis : pay as you go, $0.20 per 100,000 commands.
// - https://upstash.com/docs/redis/sdks/ratelimit-ts/costs : the sliding window's limit() runs
//   5 commands for a key's first request (EVAL, GET, GET, INCR, PEXPIRE), 4 after that, 3 for a
//   denial not in the isolate's ephemeral cache and 0 for one that is.
// Check them before publishing: prices change.
import type { Summary } from './report.ts'

const WORKERS_PER_MILLION_REQUESTS = 0.3
const WORKERS_PER_MILLION_CPU_MS = 0.02
const DO_PER_MILLION_REQUESTS = 0.15
const DO_PER_MILLION_GB_S = 12.5
const DO_BILLED_GB = 0.128
const DO_PER_MILLION_ROWS_WRITTEN = 1.0
const UPSTASH_PER_MILLION_COMMANDS = 2.0

// Assumptions, not measurements:
/** Wall-clock an object is billed per call: a busy object is active all the time, ~1 ms a call. */
const DO_ACTIVE_MS_PER_CALL = 1
/**
 * Rows written per call: one where the call charged the key. The project and the naive limiter
 * write nothing on a denial; the peer's store writes its counter on every call (to its
 * key-value backend, whose write units are priced the same).
 */
function rowsWrittenPerCall(target: string, allowedShare: number): number {
  return target === 'peer' ? 1 : allowedShare
}

/** The Redis commands per request of the same scenario under @upstash/ratelimit. */
const UPSTASH_COMMANDS: Record<string, number> = {
  'hot-key': 4,
  'many-keys': 4,
  'new-keys': 5,
  'leased-hot-key': 4,
  // Without the ephemeral cache; with it a warm isolate's denials cost 0.
  'mostly-denied': 3,
}

/** Cleanup alarms per request (billed as requests): one per key created, where one is armed. */
const ALARMS_PER_NEW_KEY: Record<string, number> = { project: 1, peer: 1, naive: 0 }

/** The cost lines of one scenario on one limiter, per million requests. */
export interface Cost {
  scenario: string
  target: string
  durableObjectCallsPerRequest: number
  workers: number
  workersCpu: number
  durableObjectRequests: number
  durableObjectDuration: number
  rowsWritten: number
  total: number
  /** The same traffic through Upstash Redis (Workers requests plus commands). */
  redis: number
}

/** Costs for every measured limiter scenario that has a Redis equivalent. */
export function costs(summaries: Summary[]): Cost[] {
  return summaries
    .filter((s) => s.skipped === undefined && s.target !== 'bare' && s.scenario in UPSTASH_COMMANDS)
    .map((s) => {
      const calls = s.durableObjectCallsPerRequest
      const alarms = s.scenario === 'new-keys' ? (ALARMS_PER_NEW_KEY[s.target] ?? 0) : 0
      const perMillion = {
        workers: WORKERS_PER_MILLION_REQUESTS,
        // workerd's CPU includes the objects' own; on Cloudflare that part is billed as duration.
        workersCpu:
          (Number.isNaN(s.cpuMsPerRequest) ? 0 : s.cpuMsPerRequest) * WORKERS_PER_MILLION_CPU_MS,
        durableObjectRequests: (calls + alarms) * DO_PER_MILLION_REQUESTS,
        durableObjectDuration:
          ((calls * DO_ACTIVE_MS_PER_CALL) / 1000) * DO_BILLED_GB * DO_PER_MILLION_GB_S,
        rowsWritten:
          calls * rowsWrittenPerCall(s.target, 1 - s.non2xxShare) * DO_PER_MILLION_ROWS_WRITTEN,
      }
      const total = Object.values(perMillion).reduce((sum, value) => sum + value, 0)
      const redis =
        WORKERS_PER_MILLION_REQUESTS +
        (UPSTASH_COMMANDS[s.scenario] ?? 0) * UPSTASH_PER_MILLION_COMMANDS
      return {
        scenario: s.scenario,
        target: s.target,
        durableObjectCallsPerRequest: calls,
        ...perMillion,
        total,
        redis,
      }
    })
}

/** The costs as a Markdown table (for docs/performance.md). */
export function formatCostTable(rows: Cost[]): string {
  const usd = (value: number) => `$${value.toFixed(3)}`
  const header =
    '| scenario | limiter | DO calls/req | Workers req | Workers CPU | DO req | DO duration | SQLite writes | total | Upstash Redis |'
  const rule = `|${'---|'.repeat(2)}${'---:|'.repeat(8)}`
  const lines = rows.map(
    (r) =>
      `| ${r.scenario} | ${r.target} | ${r.durableObjectCallsPerRequest.toFixed(3)} | ${usd(r.workers)} | ${usd(r.workersCpu)} | ${usd(r.durableObjectRequests)} | ${usd(r.durableObjectDuration)} | ${usd(r.rowsWritten)} | ${usd(r.total)} | ${usd(r.redis)} |`
  )
  return [header, rule, ...lines].join('\n')
}
