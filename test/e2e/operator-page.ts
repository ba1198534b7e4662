// End-to-end test of the operator page (`npm run test:e2e`): starts the Worker with
// `wrangler dev` on a free port, drives the page in headless Chromium (Debian's `chromium`,
// through playwright-core) and saves screenshots to docs/operator-page.png and, of the rules
// editor's rehearsal, docs/rehearse-page.png. Skipped, saying
// so, only when no Chromium is found. Everything is bounded: the whole run stops after 75 s.
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { checkLive } from './live-steps.ts'
import { checkRehearse } from './rehearse-steps.ts'

const root = resolve(import.meta.dirname, '../..')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const TOKEN = 'e2e-admin-token'
const XSS = '<img src=x onerror=alert(1)>'
const SCREENSHOT = join(root, 'docs/operator-page.png')
const REHEARSAL = join(root, 'docs/rehearse-page.png')
const auth = { Authorization: `Bearer ${TOKEN}` }

let worker: ChildProcess | undefined
let browser: Browser | undefined
const state = mkdtempSync(join(tmpdir(), 'e2e-operator-'))
const log = join(state, 'wrangler.log')

async function cleanup(): Promise<void> {
  await browser?.close().catch(() => {})
  // wrangler dev runs in its own process group: stop the whole tree (wrangler, workerd).
  if (worker?.pid) {
    try {
      process.kill(-worker.pid, 'SIGTERM')
    } catch {
      // already gone
    }
  }
  rmSync(state, { recursive: true, force: true })
}

async function fail(message: string): Promise<never> {
  console.error(`e2e failed: ${message}`)
  if (existsSync(log)) console.error(`wrangler dev log:\n${readFileSync(log, 'utf8').slice(-4000)}`)
  await cleanup()
  process.exit(1)
}

function check(ok: unknown, message: string): void {
  if (!ok) throw new Error(message)
}

function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}

async function startWorker(): Promise<string> {
  const [port, inspector] = [await freePort(), await freePort()]
  worker = spawn(
    join(root, 'node_modules/.bin/wrangler'),
    [
      'dev',
      ...['--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector)],
      ...['--persist-to', join(state, 'wrangler-state'), '--show-interactive-dev-session=false'],
      ...['--var', 'ORIGIN:demo', '--var', `ADMIN_TOKEN:${TOKEN}`],
      // The live view's flush interval, so the top key shows within a second or two.
      ...['--var', 'LIVE_FLUSH_SECONDS:1'],
    ],
    {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false' },
    }
  )
  const base = `http://127.0.0.1:${port}`
  // Wait for wrangler to say it is ready (the run's 75 s watchdog bounds this), not on a timer.
  await new Promise<void>((ready, failed) => {
    const child = worker!
    const watch = (chunk: Buffer): void => {
      appendFileSync(log, chunk)
      if (chunk.toString().includes('Ready on')) ready()
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', watch)
    child.once('exit', (code) =>
      failed(new Error(`wrangler dev exited (${code}) before it was ready`))
    )
  })
  return base
}

/** Sends `count` requests to the demo API and returns their statuses. */
async function traffic(base: string, count: number): Promise<number[]> {
  const codes: number[] = []
  for (let i = 0; i < count; i++) codes.push((await fetch(`${base}/api/hello`)).status)
  return codes
}

async function run(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log(
      `e2e skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
    )
    return
  }
  setTimeout(() => void fail('the run took longer than 75 s'), 75_000).unref()
  const started = Date.now()
  const base = await startWorker()
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 20_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(10_000)
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('dialog', (dialog) => {
    problems.push(`a dialog opened: ${dialog.message()}`)
    void dialog.dismiss()
  })
  page.on('console', (message) => {
    // A 400 or 401 from the API is logged by the browser as a failed resource; that is expected.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console: ${message.text()}`)
  })

  // Log in: the page itself is served without the token; the API needs it.
  await page.goto(`${base}/__ratelimit`)
  check(page.url() === `${base}/__ratelimit/`, `redirected to ${page.url()}`)
  await page.fill('#token', TOKEN)
  await page.click('#login button[type=submit]')
  await page.locator('#rules-table tbody tr').first().waitFor()
  const rulesState = await page.locator('#rules-state').innerText()
  check(rulesState.includes('bundled rules.json'), `rules state: ${rulesState}`)
  check(rulesState.includes('valid, nothing refused'), `validation state: ${rulesState}`)
  check(
    (await page.locator('#rules-table tbody tr').count()) === 3,
    'the three bundled rules listed'
  )
  check(
    (await page.evaluate(() => sessionStorage.length)) === 1 && !page.url().includes(TOKEN),
    'the token is in sessionStorage only'
  )

  // Traffic: the bundled api-per-ip rule allows 10 a minute.
  const codes = await traffic(base, 12)
  check(codes.join(',') === '200,200,200,200,200,200,200,200,200,200,429,429', `codes ${codes}`)

  // Try a request: an attacker's key is echoed as text, never as HTML.
  await page.fill('#explain-ip', '127.0.0.1')
  await page.fill('#explain-headers', `x-api-key: ${XSS}`)
  await page.click('#explain button[type=submit]')
  await page.locator('#explain-outcome').waitFor()
  check((await page.locator('#explain-outcome').innerText()).includes('429'), 'explained as a 429')
  const ipRow = page.locator('#explain-result tr[data-rule="api-per-ip"]')
  check((await ipRow.innerText()).includes('0 of 10'), `api-per-ip row: ${await ipRow.innerText()}`)
  const keyRow = page.locator('#explain-result tr[data-rule="api-key-burst"]')
  check((await keyRow.locator('td.key .key-label').textContent()) === XSS, 'the key shows as text')
  // The rule hides its keys elsewhere: the explanation shows the hash they are shown as there.
  const hash = (await keyRow.locator('td.key .key-hash').textContent()) ?? ''
  check(/^shown as hmac:[0-9a-f]{16}$/.test(hash), `the key's hidden form is shown (${hash})`)
  check((await page.locator('#explain-result img').count()) === 0, 'no element made from a key')

  // Reset the key from the explanation; the explanation is redrawn and a request passes again.
  await ipRow.getByRole('button', { name: 'Reset' }).click()
  await page.locator('#status', { hasText: 'Reset api-per-ip: 127.0.0.1' }).waitFor()
  await page
    .locator('#explain-result tr[data-rule="api-per-ip"]', { hasText: '10 of 10' })
    .waitFor()
  check((await traffic(base, 1))[0] === 200, 'a request passes after the reset')
  await traffic(base, 12)

  // The live view (charts, top limited keys): see live-steps.ts.
  await checkLive(page, { base, auth, xss: XSS, traffic: () => traffic(base, 1) })

  // The rules editor: an invalid document is refused, every error shown at its path.
  const invalid = {
    version: 1,
    rules: [
      {
        id: 'a',
        match: { path: '/x/*' },
        key: ['ip'],
        algorithm: 'token-bucket',
        limit: 0,
        period: '1m',
      },
      { id: 'a', key: ['ip', 'header:'], algorithm: 'fixed-window', limit: 5, period: 'soon' },
    ],
  }
  const text = JSON.stringify(invalid, null, 2)
  const direct = await fetch(`${base}/__ratelimit/rules`, {
    method: 'PUT',
    headers: auth,
    body: text,
  })
  const expected = ((await direct.json()) as { errors: string[] }).errors
  check(direct.status === 400 && expected.length >= 3, `PUT answered ${direct.status} ${expected}`)
  await page.fill('#rules-doc', text)
  await page.click('#rules-save')
  await page.locator('#rules-errors').waitFor()
  const shown = await page.locator('#rules-errors li').allTextContents()
  check(shown.length === expected.length, `errors shown ${shown.length}, sent ${expected.length}`)
  for (const [i, error] of expected.entries()) {
    const path = error.slice(0, error.indexOf(': '))
    const item = page.locator('#rules-errors li').nth(i)
    check((await item.locator('code').textContent()) === path, `error ${i} at ${path}`)
  }
  check(
    (await page.locator('#rules-state').innerText()).includes('bundled rules.json'),
    'nothing changed'
  )

  // Rehearse a tightened document on dropped traffic, before saving it: see rehearse-steps.ts.
  const bundled = JSON.parse(readFileSync(join(root, 'rules.json'), 'utf8')) as {
    rules: Record<string, unknown>[]
  }
  await checkRehearse(page, bundled, REHEARSAL)

  await page.locator('#editor-panel').scrollIntoViewIfNeeded()
  await page.screenshot({ path: SCREENSHOT, fullPage: true })
  check(problems.length === 0, problems.join('\n'))
  console.log(
    `e2e passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshot: docs/operator-page.png`
  )
}

run().then(cleanup, (error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error))
)
