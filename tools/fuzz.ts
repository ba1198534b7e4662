/**
 * @module tools/fuzz
 * `npm run fuzz -- [--requests N] [--documents N] [--mixes N] [--seed S] [--concurrency C]
 * [--smoke]`: sends
 * generated requests and rules documents through the built Worker in workerd (Miniflare's
 * dispatchFetch, on 127.0.0.1, with the demo origin) and fails (exit 1) on any 500, any request
 * that got no answer, and any uncaught error or `internal-error` in workerd's logs.
 *
 * Documents go in between the requests: most through `PUT /__ratelimit/rules`, one in five
 * (in runs of 100) written to KV directly, so that invalid ones reach the refresh path too; valid
 * ones then govern the traffic that follows. Then come the policy mixes (`fuzz-mix-run.ts`):
 * documents that mix every kind of rule, each with traffic of its own and an exact oracle, which
 * fail the run on any limit exceeded or any request a rule did not count.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import fc from 'fast-check'
import { Miniflare, Request } from 'miniflare'
import { buildBundle, limiterWorkerOptions } from '../bench/targets.ts'
import { SECRETS, requestSpec, toRequest, type RequestSpec } from './fuzz-requests.ts'
import { anyJson, mutatedDocument, validDocument } from './fuzz-rules.ts'
import { FuzzLog, Tally } from './fuzz-report.ts'
import { mixLines, runMixes, type MixReport } from './fuzz-mix-run.ts'
import {
  helpText,
  readCommandLine,
  usageMessage,
  UsageError,
  type CommandSpec,
} from './cli/command-line.ts'

const FUZZ: CommandSpec = {
  usage: ['npm run fuzz -- [options]'],
  about:
    'Sends generated requests and rules documents through the built Worker in workerd, then ' +
    'policy mixes with an exact oracle; fails on any 500, unanswered request, uncaught error, ' +
    'limit exceeded or request a rule did not count.',
  options: [
    {
      name: 'requests',
      value: '<n>',
      default: '100000; --smoke 10000',
      does: 'generated requests',
    },
    {
      name: 'documents',
      value: '<n>',
      default: '10000; --smoke 500',
      does: 'rules documents sent between them',
    },
    {
      name: 'mixes',
      value: '<n>',
      default: '400; --smoke 40',
      does: 'policy mixes, each with traffic of its own',
    },
    { name: 'seed', value: '<n>', default: '8', does: 'seeds everything generated' },
    { name: 'concurrency', value: '<n>', default: '64', does: 'requests in flight at once' },
    {
      name: 'smoke',
      default: 'off',
      does: 'what CI runs: a tenth of the requests, a twentieth of the documents',
    },
  ],
  notes: ['Exit status: 0 nothing found, 1 a failure found, 2 a bad option.'],
}
const root = resolve(import.meta.dirname, '..')
const OUTDIR = '.fuzz-out'
const ORIGIN = 'http://fuzz.example'
const CHUNK = 1_000
/** A request that gets no answer in this long is a failure, not a slow one. */
const HANG_MS = 60_000

// As for the benchmark: Miniflare's SQLite files on RAM, not on a disk that would dominate.
if (process.env.TMPDIR === undefined && existsSync('/dev/shm')) process.env.TMPDIR = '/dev/shm'

const options = readOptions()
const tally = new Tally()
const log = new FuzzLog()

/** The i-th document as text: valid, one field mutated, any JSON, or not JSON at all. */
function documentAt(index: number, seed: number): string {
  const kind = index % 20
  const arbitrary = kind < 10 ? validDocument : kind < 17 ? mutatedDocument : anyJson(10)
  const [value] = fc.sample(arbitrary, { seed: seed * 1_000_003 + index, numRuns: 1 })
  const text = JSON.stringify(value)
  return kind === 19 ? text.slice(0, Math.max(1, text.length - 7)) : text
}

/** Requests are generated a chunk at a time, so memory stays flat whatever `--requests`. */
function requestsOf(seed: number, count: number): () => RequestSpec {
  let chunk: RequestSpec[] = []
  let made = 0
  return () => {
    if (chunk.length === 0) {
      const numRuns = Math.min(CHUNK, count - made)
      chunk = fc.sample(requestSpec, { seed: seed + made, numRuns }).reverse()
      made += numRuns
    }
    return chunk.pop()!
  }
}

async function send(
  mf: Miniflare,
  request: Request,
  label: string,
  kind: 'request' | 'document',
  bigBody = false
) {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hang = new Promise<'hung'>(
    (resolve) => (timer = setTimeout(() => resolve('hung'), HANG_MS))
  )
  try {
    const response = await Promise.race([mf.dispatchFetch(request), hang])
    if (response === 'hung') return tally.failure(`no answer in ${HANG_MS / 1000} s: ${label}`)
    const body = await response.text()
    const fromOrigin = response.headers.get('x-demo-origin') !== null
    tally.status(kind, response.status, fromOrigin)
    // The demo origin echoes what it received: the limiter's own secrets must never be in it.
    if (fromOrigin && (body.includes(SECRETS.ADMIN_TOKEN) || body.includes(SECRETS.DECISION_TOKEN)))
      tally.failure(`a limiter secret reached the origin: ${label}`)
    if (response.status === 500 && !fromOrigin)
      tally.failure(`500 for ${label}: ${body.slice(0, 200)}`)
    if (/\n\s+at .*:\d+:\d+/.test(body) && !fromOrigin)
      tally.failure(`stack trace in the body for ${label}`)
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause
    // Refused by Node's fetch before anything was sent (a header it will not write).
    if (cause?.code === 'UND_ERR_INVALID_ARG') tally.status(kind, 'unsendable')
    // workerd may answer (e.g. 501 for an unknown method) and close before a big body is sent.
    else if (cause?.code === 'EPIPE' && bigBody)
      tally.status(kind, 'closed while its body was sent')
    else tally.failure(`no response for ${label}: ${String(error)} (${String(cause)})`)
  } finally {
    clearTimeout(timer)
  }
}

async function main(): Promise<void> {
  const started = Date.now()
  const { requests, documents, mixes, seed, concurrency } = options
  console.log(
    `fuzz: ${requests} requests, ${documents} documents, ${mixes} policy mixes, seed ${seed}, ${concurrency} at once`
  )
  let mixed: MixReport | undefined
  console.log(`building: wrangler deploy --dry-run --outdir ${OUTDIR}`)
  await buildBundle(root, OUTDIR)
  const mf = new Miniflare({
    ...limiterWorkerOptions(resolve(root, OUTDIR, 'index.js'), {
      ...SECRETS,
      ORIGIN: 'demo',
      // Short, so documents written straight to KV are picked up during the run.
      RULES_REFRESH_SECONDS: '1',
      LIMITER_TIMEOUT_MS: '2000',
    }),
    host: '127.0.0.1',
    port: 0,
    cf: false,
    logRequests: false,
    handleStructuredLogs: (entry: { level: string; message: string }) => log.record(entry),
  })
  try {
    await mf.ready
    const kv = await mf.getKVNamespace('RULES')
    const nextRequest = requestsOf(seed, requests)
    const total = requests + documents
    let step = 0
    let documentsSent = 0
    const worker = async () => {
      for (let at = step++; at < total; at = step++) {
        // Document i goes in before request ⌊i × requests / documents⌋.
        const due =
          documentsSent < documents && documentsSent * requests <= (at - documentsSent) * documents
        if (due) {
          const index = documentsSent++
          const text = documentAt(index, seed)
          // In runs of 100, since every admin PUT postpones this isolate's next KV read.
          if (Math.floor(index / 100) % 5 === 4) {
            await kv.put('rules', text)
            tally.status('document', 'kv')
          } else {
            const request = new Request(`${ORIGIN}/__ratelimit/rules`, {
              method: 'PUT',
              // The operator's own address: the fuzzed clients' wrong tokens must not lock it out.
              headers: {
                authorization: `Bearer ${SECRETS.ADMIN_TOKEN}`,
                'cf-connecting-ip': '203.0.113.250',
              },
              body: text,
            })
            await send(mf, request, `document ${index}: ${text.slice(0, 300)}`, 'document')
          }
          continue
        }
        const spec = nextRequest()
        const request = toRequest(spec, ORIGIN)
        if (typeof request === 'string') tally.status('request', `unsendable (${request})`)
        else await send(mf, request, describe(spec), 'request', typeof spec.body === 'object')
        if (at % 10_000 === 0 && at > 0)
          console.log(`  ${at} of ${total} (${Math.round((Date.now() - started) / 1000)} s)`)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    if (mixes > 0) mixed = await runMixes(mf, ORIGIN, SECRETS.ADMIN_TOKEN, mixes, seed)
  } finally {
    await mf.dispose()
  }
  const seconds = (Date.now() - started) / 1000
  const failures = [
    ...tally.failures,
    ...log.failures,
    ...(mixed ? [...mixed.errors, ...mixed.exceeded, ...mixed.uncounted] : []),
  ]
  console.log(
    `\n${tally.report()}\n${log.report()}\n${mixed ? `${mixLines(mixed)}\n` : ''}time: ${seconds.toFixed(1)} s (bundle build included)`
  )
  if (failures.length > 0) {
    console.error(`\nFAILED: ${failures.length} problem(s); the first ones:`)
    for (const failure of failures.slice(0, 20)) console.error(`  ${failure}`)
    process.exitCode = 1
  } else {
    console.log(
      '\nok: no 500, every request answered, no uncaught error or internal-error logged, no limit exceeded, every request counted by its rules'
    )
  }
}

/** A request for messages: its spec, with the body cut short. */
function describe(spec: RequestSpec): string {
  const body =
    typeof spec.body === 'object' ? `<${spec.body.bytes} bytes>` : spec.body?.slice(0, 80)
  return JSON.stringify({ ...spec, body }).slice(0, 400)
}

function readOptions() {
  try {
    const { values, help } = readCommandLine(FUZZ, process.argv.slice(2))
    if (help) {
      console.log(helpText(FUZZ))
      process.exit(0)
    }
    const value = (name: string, fallback: string, smoke = fallback) =>
      (values[name] as string | undefined) ?? (values.smoke ? smoke : fallback)
    return {
      requests: count('requests', value('requests', '100000', '10000')),
      documents: count('documents', value('documents', '10000', '500')),
      mixes: count('mixes', value('mixes', '400', '40')),
      seed: count('seed', value('seed', '8')),
      concurrency: Math.max(1, count('concurrency', value('concurrency', '64'))),
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage('npm run fuzz --', error))
    process.exit(2)
  }
}

function count(name: string, value: string): number {
  const number = Number(value)
  if (!Number.isSafeInteger(number) || number < 0)
    throw new UsageError(`--${name} must be a whole number, not "${value}"`)
  return number
}

try {
  await main()
} catch (error) {
  console.error(error)
  process.exitCode = 1
}
