// The e2e steps of the rules editor's rehearsal (issue 45): traffic dropped on the page is
// replayed through the rules in force and the editor's, in the page's worker, and the per-rule
// table and the chart are shown before anything is saved. The numbers are worked out by hand
// below; a file in no known format is refused with its name and line.
import { gzipSync } from 'node:zlib'
import type { Page } from 'playwright-core'

function check(ok: unknown, message: string): void {
  if (!ok) throw new Error(message)
}

/** A Logpush line: GET /api/hello from `ip`, `s` seconds into 09:00 UTC, with its logged headers. */
function line(ip: string, s: number, headers: Record<string, string> = {}): string {
  return JSON.stringify({
    ClientIP: ip,
    ClientRequestHost: 'localhost',
    ClientRequestMethod: 'GET',
    ClientRequestURI: '/api/hello',
    EdgeResponseStatus: 200,
    EdgeStartTimestamp: Date.UTC(2026, 10, 2, 9, 0, s) * 1e6,
    RequestHeaders: headers,
  })
}

/**
 * In one minute, 192.0.2.1 sends 8 requests (with an API key, within api-key-burst's 20) and
 * 192.0.2.2 sends 12. The bundled api-per-ip allows 10 a minute: 2 refused. At 6 a minute: 2 of
 * the first and 6 of the second refused, so 6 newly denied, on 2 keys. No request carries
 * x-account or x-tenant: login-failures and the new per-tenant rule cannot be judged.
 */
const TRAFFIC = [
  ...Array.from({ length: 8 }, (_, i) => line('192.0.2.1', i, { 'x-api-key': 'k-1' })),
  ...Array.from({ length: 12 }, (_, i) => line('192.0.2.2', 10 + i)),
].join('\n')

/** Drops files on the page's drop zone, as a user's drag and drop does. */
async function drop(page: Page, files: { name: string; bytes: Buffer }[]): Promise<void> {
  const payload = files.map(({ name, bytes }) => ({ name, base64: bytes.toString('base64') }))
  const dataTransfer = await page.evaluateHandle((items) => {
    // The page's own DataTransfer (this runs in the browser; Node's types do not have it).
    const { DataTransfer } = globalThis as unknown as {
      DataTransfer: new () => { items: { add: (file: File) => void } }
    }
    const transfer = new DataTransfer()
    for (const { name, base64 } of items) {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
      transfer.items.add(new File([bytes], name))
    }
    return transfer
  }, payload)
  await page.dispatchEvent('#rehearse-drop', 'drop', { dataTransfer })
}

/**
 * Puts a tightened document in the editor, drops traffic, rehearses, and checks the table, the
 * chart and the rule it cannot judge; then a bad file.
 *
 * @param page - the operator page, logged in
 * @param bundled - the bundled rules document (what is in force)
 * @param screenshot - where to save a picture of the editor and the rehearsal
 */
export async function checkRehearse(
  page: Page,
  bundled: { rules: Record<string, unknown>[] },
  screenshot: string
): Promise<void> {
  const rules = bundled.rules.map((rule) =>
    rule.id === 'api-per-ip' ? { ...rule, limit: 6 } : rule
  )
  const tenant = {
    id: 'per-tenant',
    key: ['header:x-tenant'],
    algorithm: 'fixed-window',
    limit: 100,
    period: '1m',
  }
  await page.fill('#rules-doc', JSON.stringify({ ...bundled, rules: [...rules, tenant] }, null, 2))
  check(await page.locator('#rehearse').isDisabled(), 'Rehearse waits for a file')
  await drop(page, [{ name: 'logpush.ndjson.gz', bytes: gzipSync(TRAFFIC) }])
  await page.locator('#rehearse-chosen', { hasText: 'logpush.ndjson.gz' }).waitFor()
  await page.click('#rehearse')
  const row = page.locator('#rehearse-table tr[data-rule="api-per-ip"]')
  await row.waitFor()
  const cells = await row.locator('td').allTextContents()
  // rule, in, matched, denied now, denied proposed, newly denied, newly allowed, keys affected
  check(cells.slice(0, 8).join(',') === 'api-per-ip,both,20,2,8,6,0,2', `api-per-ip row: ${cells}`)
  check(cells[8]?.startsWith('api-per-ip|192.0.2.2 × 4'), `top key: ${cells[8]}`)
  const status = await page.locator('#rehearse-status').innerText()
  check(status.includes('20 requests') && status.includes('newly denied 6'), `status: ${status}`)
  const unjudged = await page.locator('#rehearse-unjudged').innerText()
  check(
    unjudged.includes('per-tenant') && unjudged.includes('header:x-tenant'),
    `unjudged: ${unjudged}`
  )
  check((await page.locator('#rehearse-chart canvas').count()) === 1, 'the chart is drawn')
  check(
    (await page.locator('#rules-state').innerText()).includes('bundled rules.json'),
    'rehearsing saves nothing'
  )
  // The editor and the rehearsal, in page coordinates (a box is the viewport's, scrolled).
  const scrolled = await page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY)
  const box = async (selector: string) => (await page.locator(selector).boundingBox())!
  const [editor, result] = [await box('#editor-panel'), await box('#rehearse-panel')]
  await page.screenshot({
    path: screenshot,
    fullPage: true,
    clip: {
      x: 0,
      y: scrolled + editor.y - 10,
      width: 1280,
      height: result.y + result.height - editor.y + 20,
    },
  })

  await drop(page, [{ name: 'notes.txt', bytes: Buffer.from('hello\n') }])
  await page.click('#rehearse')
  await page.locator('#rehearse-status', { hasText: 'Not rehearsed' }).waitFor()
  const refused = await page.locator('#rehearse-status').innerText()
  check(refused.includes('notes.txt:1: unknown format'), `a file in no format: ${refused}`)
}
