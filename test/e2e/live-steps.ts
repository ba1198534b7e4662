// The e2e steps that need the live view (issue 12, items 1-2: `live` in GET <prefix>/stats).
// With `live` in the stats, the real one is checked: a chart per rule and the top limited key
// appear after the traffic. Without it, the page must say "No live data yet", and then the
// page's drawing of the documented shape is checked with a `live` added to the real stats by
// the browser's request routing (the Worker still answers everything else, resets included).
// LIVE_REQUIRED=1 (set it once the live view is merged) fails the run when `live` is absent.
import type { Page } from 'playwright-core'

interface LiveContext {
  base: string
  auth: Record<string, string>
  /** The attacker-controlled key value to show as text. */
  xss: string
  /** Sends one request to /api/hello; its statuses. */
  traffic: () => Promise<number[]>
}

function check(ok: unknown, message: string): void {
  if (!ok) throw new Error(message)
}

/** Checks the charts and the top limited keys, then resets the top key from its row. */
export async function checkLive(page: Page, context: LiveContext): Promise<void> {
  const stats = (await (
    await fetch(`${context.base}/__ratelimit/stats`, { headers: context.auth })
  ).json()) as { live?: unknown }
  if (stats.live !== undefined) {
    await waitForRealLive(page)
  } else {
    check(process.env.LIVE_REQUIRED !== '1', 'GET /stats has no live (LIVE_REQUIRED=1)')
    await page.click('#refresh')
    await page.locator('#live-empty', { hasText: 'No live data yet' }).waitFor()
    console.log(
      'e2e: GET /stats has no `live` yet: the live view is checked with a synthesized `live`'
    )
    await routeSyntheticLive(page, context)
    await page.click('#refresh')
    const xssRow = page.locator('#top-table tbody tr', { hasText: context.xss })
    await xssRow.waitFor()
    check((await page.locator('#top-table img').count()) === 0, 'no element made from a key')
    const hidden = page.locator('#top-table tbody tr', { hasText: 'hmac:9f86d081884c7d65' })
    check((await hidden.getByRole('button').count()) === 0, 'a hidden key has no reset button')
  }
  await page.locator('.chart[data-rule="api-per-ip"] canvas').first().waitFor()
  const top = page.locator('#top-table tbody tr', { hasText: '127.0.0.1' }).first()
  await top.waitFor()
  check((await top.locator('td').first().textContent()) === 'api-per-ip', 'top key rule')
  check((await context.traffic())[0] === 429, 'the top key is limited before its reset')
  await top.getByRole('button', { name: 'Reset' }).click()
  await page.locator('#status', { hasText: 'Reset api-per-ip: 127.0.0.1' }).waitFor()
  check((await context.traffic())[0] === 200, 'a request passes after the reset')
}

/** The Worker's live view: flushed within seconds, so the page is refreshed until it shows. */
async function waitForRealLive(page: Page): Promise<void> {
  const deadline = Date.now() + 25_000
  const ready = page.locator('#top-table tbody tr', { hasText: '127.0.0.1' })
  while ((await ready.count()) === 0) {
    check(Date.now() < deadline, 'the live view showed no top key within 25 s')
    await page.click('#refresh')
    await page.waitForTimeout(1000)
  }
}

/** Adds a `live` of the documented shape to the Worker's real `GET /stats` answers. */
async function routeSyntheticLive(page: Page, context: LiveContext): Promise<void> {
  const now = Math.floor(Date.now() / 60_000) * 60_000
  const minutes = (scale: number, limitedFrom: number) =>
    Array.from({ length: 45 }, (_, i) => {
      const allowed = Math.round(scale * (6 + 4 * Math.sin(i / 5) + (i % 7)))
      const limited = i >= limitedFrom ? Math.round(scale * (2 + (i % 5))) : 0
      return { minute: now - (44 - i) * 60_000, allowed, limited, shadowLimited: 0 }
    })
  const rule = (series: ReturnType<typeof minutes>) => ({
    allowed: series.reduce((n, m) => n + m.allowed, 0),
    limited: series.reduce((n, m) => n + m.limited, 0),
    shadowLimited: series.reduce((n, m) => n + m.shadowLimited, 0),
    minutes: series,
  })
  const burst = minutes(1.6, 38).map((m, i) => ({ ...m, shadowLimited: i > 30 ? i % 4 : 0 }))
  const live = {
    rules: { 'api-per-ip': rule(minutes(1, 30)), 'api-key-burst': rule(burst) },
    topLimited: [
      { rule: 'api-per-ip', key: 'api-per-ip|127.0.0.1', count: 14, retryAfterMs: 41_000 },
      {
        rule: 'api-key-burst',
        key: `api-key-burst|${encodeURIComponent(context.xss)}`,
        count: 3,
        retryAfterMs: 100,
      },
      // A rule with showKeys off reports a hash: shown, but not resettable from the page.
      { rule: 'api-key-burst', key: 'hmac:9f86d081884c7d65', count: 2, retryAfterMs: 0 },
    ],
  }
  await page.route(`${context.base}/__ratelimit/stats`, async (route) => {
    const response = await route.fetch()
    await route.fulfill({ response, json: { ...(await response.json()), live } })
  })
}
