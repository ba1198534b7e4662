/**
 * @module tools/fuzz-mix-run
 * `npm run fuzz`'s policy mixes: each generated mix (`fuzz-mixes.ts`) is put in force through
 * the admin API, its traffic sent through the Worker, and the exact oracle (`fuzz-oracle.ts`)
 * held against what reached the origin and what the keys' objects counted (read back through
 * `GET /keys`).
 */
import fc from 'fast-check'
import { Request, type Miniflare } from 'miniflare'
import { parseRules } from '../src/rules'
import { capacityOf, MixOracle } from './fuzz-oracle.ts'
import { mixOf, mixRequestInit, type Mix } from './fuzz-mixes.ts'

/** The most requests a mix sends at once. */
const MAX_BATCH = 4

/** What the mixes came to. */
export interface MixReport {
  mixes: number
  requests: number
  /** Answers by status, the origin's and the limiter's own together. */
  statuses: Map<number, number>
  exceeded: string[]
  uncounted: string[]
  /** 5xx answers other than 503/504 (a rule's fail mode, a queue that timed out). */
  errors: string[]
}

/**
 * Runs `count` mixes, one after another.
 *
 * @param mf - the Worker, with the demo origin
 * @param origin - the URL its requests are sent to
 * @param adminToken - `ADMIN_TOKEN`
 * @param count - how many mixes
 * @param seed - seeds the mixes
 */
export async function runMixes(
  mf: Miniflare,
  origin: string,
  adminToken: string,
  count: number,
  seed: number
): Promise<MixReport> {
  const report: MixReport = {
    mixes: 0,
    requests: 0,
    statuses: new Map(),
    exceeded: [],
    uncounted: [],
    errors: [],
  }
  const admin = (path: string, method = 'GET', body?: string) =>
    mf.dispatchFetch(
      new Request(`${origin}/__ratelimit/${path}`, {
        method,
        ...(body === undefined ? {} : { body }),
        // The operator's own address: the mixes' clients never share it.
        headers: { authorization: `Bearer ${adminToken}`, 'cf-connecting-ip': '203.0.113.250' },
      })
    )
  for (let index = 0; index < count; index++) {
    const [mix] = fc.sample(mixOf(`fz${seed}m${index}`, 30, MAX_BATCH), {
      seed: seed * 7919 + index,
      numRuns: 1,
    }) as [Mix]
    const put = await admin('rules', 'PUT', JSON.stringify(mix.document))
    await put.arrayBuffer()
    if (!put.ok) {
      report.errors.push(`mix ${index}: PUT /rules answered ${put.status}`)
      continue
    }
    const oracle = new MixOracle(parseRules(mix.document, 'fuzz mix'), MAX_BATCH)
    const startedMs = Date.now()
    for (const batch of mix.batches)
      await Promise.all(
        batch.map(async (item) => {
          const { url, ...init } = mixRequestInit(item, origin)
          const response = await mf.dispatchFetch(new Request(url, init))
          await response.arrayBuffer()
          report.requests++
          report.statuses.set(response.status, (report.statuses.get(response.status) ?? 0) + 1)
          if (response.status >= 500 && response.status !== 503 && response.status !== 504)
            report.errors.push(`mix ${index}: ${response.status} for ${JSON.stringify(item)}`)
          oracle.note(new globalThis.Request(url, init), {
            status: response.status,
            own: (response.headers.get('content-type') ?? '').includes('problem+json'),
            degradedBy: response.headers.get('x-ratelimit-degraded'),
          })
        })
      )
    const elapsedMs = Date.now() - startedMs
    for (const problem of oracle.exceeded(elapsedMs))
      report.exceeded.push(`mix ${index}: ${problem}`)
    for (const { check, atLeast } of oracle.mustHaveCounted(elapsedMs)) {
      const [, ...parts] = check.key.split('|')
      const answer = await admin(['keys', check.rule.id, ...parts].join('/'))
      const { remaining } = (await answer.json()) as { remaining: number }
      const used = capacityOf(check.policy) - remaining
      if (used < atLeast)
        report.uncounted.push(
          `mix ${index}: ${check.rule.id} ${check.key}: ${used} counted, ${atLeast} reached the origin`
        )
    }
    report.mixes++
  }
  return report
}

/** The report's lines. */
export function mixLines(report: MixReport): string {
  const statuses = [...report.statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status} × ${n}`)
    .join(', ')
  return [
    `policy mixes: ${report.mixes} documents (reject, degrade, shadow, countOn, concurrency, leased, penalty), ${report.requests} requests`,
    `  answers: ${statuses}`,
    `  5xx other than 503/504: ${report.errors.length}; limits exceeded: ${report.exceeded.length}; requests a rule did not count: ${report.uncounted.length}`,
  ].join('\n')
}
