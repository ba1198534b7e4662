import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../src/app'
import { peek } from '../../src/limiter/client'
import { parseRules } from '../../src/rules'
import { capacityOf, MixOracle } from '../../tools/fuzz-oracle'
import { mixOf, mixRequestInit, type Mix } from '../../tools/fuzz-mixes'
import { freezeClock } from '../support/clock'

const MAX_BATCH = 3
let runs = 0

/** Sends a mix through the Worker (block cache and lease books on, as in production). */
async function runMix(
  mix: Mix
): Promise<{ exceeded: string[]; uncounted: string[]; errors: string[] }> {
  // Rule ids of their own per run: each run counts in fresh objects.
  const prefix = `mix${++runs}`
  const document = JSON.parse(JSON.stringify(mix.document).replaceAll('"mix-r', `"${prefix}-r`))
  const ruleSet = parseRules(document, prefix)
  const app = createApp({ rules: ruleSet })
  const vars = { ...env, ORIGIN: 'demo' }
  // The body is read before the request's background work is awaited: a concurrency slot is
  // held until the body has been sent.
  const send = async (url: string, init: RequestInit) => {
    const ctx = createExecutionContext()
    const response = await app.fetch(new Request(url, init), vars, ctx)
    await response.arrayBuffer()
    await waitOnExecutionContext(ctx)
    return response
  }
  const oracle = new MixOracle(ruleSet, MAX_BATCH)
  const errors: string[] = []
  for (const batch of mix.batches) {
    await Promise.all(
      batch.map(async (item) => {
        const { url, ...init } = mixRequestInit(item, 'https://example.com')
        const response = await send(url, init)
        if (response.status >= 500 && response.status !== 503 && response.status !== 504)
          errors.push(`${response.status} for ${JSON.stringify(item)}`)
        oracle.note(new Request(url, init), {
          status: response.status,
          own: (response.headers.get('content-type') ?? '').includes('problem+json'),
          degradedBy: response.headers.get('x-ratelimit-degraded'),
        })
      })
    )
  }
  const uncounted: string[] = []
  for (const { check, atLeast } of oracle.mustHaveCounted(0)) {
    const decision = await peek(env.LIMITER, check, 10_000)
    const used = capacityOf(check.policy) - decision.remaining
    if (used < atLeast)
      uncounted.push(`${check.rule.id} ${check.key}: ${used} counted, ${atLeast} reached`)
  }
  return { exceeded: oracle.exceeded(0), uncounted, errors }
}

describe('generated mixes of policies', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('no rule that rejects lets more of a key through than its limit, and every rule counts every request it did not refuse', async () => {
    // Time stands still: no window ends and no token comes back while a mix runs.
    freezeClock()
    await fc.assert(
      fc.asyncProperty(mixOf('mix', 12, MAX_BATCH), async (mix) => {
        const { exceeded, uncounted, errors } = await runMix(mix)
        expect({ exceeded, uncounted, errors }).toEqual({ exceeded: [], uncounted: [], errors: [] })
      }),
      { numRuns: 30, seed: 18 }
    )
  }, 120_000)
})
