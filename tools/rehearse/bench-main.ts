/**
 * @module tools/rehearse/bench-main
 * The rehearsal's benchmark: a million generated Logpush lines (`sample.ts`, gzipped, as Logpush
 * writes them) rehearsed against 20 rules (`bench-rules.ts`), timed in one thread and in two (as
 * `rules rehearse` runs), with the heap it held at most, beside a tenth of the traffic (memory
 * should follow the keys alive, not the file) and beside the simulator's own engine (`runRules`)
 * on the same requests and rules. Exits 1 when the million lines take longer than
 * `--max-seconds` (default 30) in two threads.
 */
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { createGzip } from 'node:zlib'
import { parseRules } from '../../src/rules'
import type { Arrival } from '../simulate/profile'
import { runRules } from '../simulate/run'
import { benchCurrent, benchProposed } from './bench-rules'
import { proposedInThread } from './parallel'
import { rehearse } from './rehearse'
import { logpushLine, sampleRequests, SAMPLE_DEFAULTS } from './sample'

/** Writes `count` sample requests as a gzipped Logpush file. */
async function writeTraffic(path: string, count: number): Promise<void> {
  async function* text() {
    let chunk: string[] = []
    let n = 0
    for (const request of sampleRequests({ ...SAMPLE_DEFAULTS, requests: count })) {
      chunk.push(logpushLine(request, n++))
      if (chunk.length === 10_000) {
        yield `${chunk.join('\n')}\n`
        chunk = []
      }
    }
    if (chunk.length > 0) yield `${chunk.join('\n')}\n`
  }
  await pipeline(Readable.from(text()), createGzip(), createWriteStream(path))
}

/** The same requests as the simulator's trace; its key stands for every key part, a number. */
function arrivalsOf(count: number): Arrival[] {
  const clients = new Map<string, string>()
  const arrivals: Arrival[] = []
  for (const request of sampleRequests({ ...SAMPLE_DEFAULTS, requests: count })) {
    let key = clients.get(request.ip)
    if (key === undefined) clients.set(request.ip, (key = String(clients.size)))
    const t = Math.max(0, request.atMs - SAMPLE_DEFAULTS.startMs)
    arrivals.push({ t, key, cost: 1, status: request.status })
  }
  return arrivals.sort((a, b) => a.t - b.t)
}

interface Timed {
  seconds: number
  cpuSeconds: number
  /** The most heap alive while it ran, above what was alive before, MiB (this thread), if measured. */
  heapMiB: number | undefined
  /** The process's resident memory at most, MiB (both threads). */
  rssMiB: number
}

/**
 * Rehearses the file, timing it and sampling the process's memory at each batch.
 *
 * @param path - the Logpush file
 * @param threads - 2: the proposed document decided in a worker thread, as `rules rehearse` does
 * @param live - also measure the heap that survives a full collection, every 25,000 requests (a
 *   few collections more: the run's time is not the one to quote)
 */
async function timed(path: string, threads: 1 | 2, live: boolean) {
  // `npm run bench:rehearse` runs with --expose-gc.
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const before = process.memoryUsage().heapUsed
  let most = 0
  let rss = 0
  let sampled = 0
  const started = performance.now()
  const cpu = process.cpuUsage()
  const proposed = parseRules(benchProposed(), 'proposed')
  const task = {
    reorderMs: 60_000,
    skipBad: false,
    methodOverride: 'count' as const,
    files: [path],
  }
  const report = await rehearse({
    current: { name: 'current', ruleSet: parseRules(benchCurrent(), 'current') },
    proposed: { name: 'proposed', ruleSet: proposed },
    ...(threads === 2
      ? {
          proposedElsewhere: proposedInThread(
            { ...task, document: benchProposed(), name: 'proposed' },
            proposed.rules
          ),
        }
      : {}),
    traffic: [
      {
        name: path,
        open: () => Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
      },
    ],
    reorderMs: 60_000,
    skipBad: false,
    methodOverride: 'count',
    onProgress: (requests) => {
      rss = Math.max(rss, process.memoryUsage().rss)
      if (!live || !gc || requests - sampled < 25_000) return
      sampled = requests
      gc()
      most = Math.max(most, process.memoryUsage().heapUsed - before)
    },
  })
  const used = process.cpuUsage(cpu)
  const run: Timed = {
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
    heapMiB: live && gc ? most / 2 ** 20 : undefined,
    rssMiB: rss / 2 ** 20,
  }
  return { report, run }
}

function row(name: string, lines: number, seconds: number, rest: string): string {
  const rate = Math.round(lines / seconds).toLocaleString('en-US')
  return `${name.padEnd(34)}${lines.toLocaleString('en-US').padStart(10)}  ${seconds.toFixed(1).padStart(6)} s  ${rate.padStart(9)}/s  ${rest}`
}

/**
 * Runs the benchmark.
 *
 * @param argv - `--requests <n>` (1,000,000), `--max-seconds <s>` (30), `--keep <file>` (keep
 *   the generated Logpush file there)
 */
export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: 'string', default: '1000000' },
      'max-seconds': { type: 'string', default: '30' },
      keep: { type: 'string' },
    },
  })
  const requests = Number(values.requests)
  const maxSeconds = Number(values['max-seconds'])
  const dir = mkdtempSync(join(tmpdir(), 'bench-rehearse-'))
  try {
    const big = values.keep ?? join(dir, 'logpush.ndjson.gz')
    const small = join(dir, 'logpush-tenth.ndjson.gz')
    const made = performance.now()
    await writeTraffic(big, requests)
    await writeTraffic(small, Math.round(requests / 10))
    const mib = (statSync(big).size / 2 ** 20).toFixed(1)
    const madeS = ((performance.now() - made) / 1000).toFixed(1)
    console.log(`generated ${requests} Logpush lines (${mib} MiB gzipped) in ${madeS} s`)
    const count = (document: Record<string, unknown>) => (document.rules as unknown[]).length
    console.log(`rules: ${count(benchCurrent())} in force, ${count(benchProposed())} proposed\n`)
    const tenth = await timed(small, 1, true)
    const one = await timed(big, 1, true)
    const whole = await timed(big, 2, false)
    const arrivals = arrivalsOf(requests)
    const simulated = performance.now()
    runRules(arrivals, parseRules(benchCurrent(), 'current').rules)
    const simulateS = (performance.now() - simulated) / 1000
    const of = (run: Timed) =>
      `cpu ${run.cpuSeconds.toFixed(1)} s, rss ${run.rssMiB.toFixed(0)} MiB` +
      (run.heapMiB === undefined ? '' : `, heap alive +${run.heapMiB.toFixed(1)} MiB at most`)
    const tenthLines = Math.round(requests / 10)
    console.log(row('rehearse a tenth, 1 thread (*)', tenthLines, tenth.run.seconds, of(tenth.run)))
    console.log(row('rehearse all, 1 thread (*)', requests, one.run.seconds, of(one.run)))
    console.log(row('rehearse all, 2 threads', requests, whole.run.seconds, of(whole.run)))
    const simulator = 'in memory, every rule on every request, no match'
    console.log(row('simulate: runRules (1 document)', requests, simulateS, simulator))
    console.log(
      '(*) with a full collection every 25,000 requests, to measure the heap that stays alive'
    )
    const r = whole.report.requests
    const met = whole.report.rules.reduce((sum, rule) => sum + rule.matched, 0) / r.total
    console.log(`\na request meets ${met.toFixed(1)} of the rules on average (either document)`)
    console.log(
      `${r.total} requests: newly denied ${r.newlyDenied} (${r.newlyDeniedPercent.toFixed(3)}%), newly allowed ${r.newlyAllowed}; ${whole.report.unjudged.length} rules not judged`
    )
    if (values.keep) console.log(`kept the Logpush file: ${values.keep}`)
    if (JSON.stringify(one.report) !== JSON.stringify(whole.report)) {
      console.error('one thread and two reported differently')
      return 1
    }
    if (whole.run.seconds > maxSeconds) {
      console.error(
        `over the budget: ${whole.run.seconds.toFixed(1)} s for ${requests} lines (at most ${maxSeconds} s)`
      )
      return 1
    }
    return 0
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
