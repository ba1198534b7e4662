/**
 * @module tools/rehearse/bench-main
 * The rehearsal's benchmark: a million generated Logpush lines (`sample.ts`, gzipped, as Logpush
 * writes them) rehearsed against 20 rules (`bench-rules.ts`), timed, with the memory it held at
 * most, beside a tenth of the traffic (memory should not follow the file) and beside the
 * simulator's own engine (`runRules`) on the same requests and rules. Exits 1 when the million
 * lines take longer than `--max-seconds` (default 30).
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createReadStream } from 'node:fs'
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
import { rehearse } from './rehearse'
import { logpushLine, sampleRequests, SAMPLE_DEFAULTS } from './sample'

/** Writes `count` sample requests as a gzipped Logpush file. */
async function writeTraffic(
  path: string,
  count: number,
  keep: Arrival[] | undefined
): Promise<void> {
  // The simulator's trace key stands for every key part, `cf:asn` too: a number per address.
  const clients = new Map<string, string>()
  const client = (ip: string) => clients.get(ip) ?? clients.set(ip, String(clients.size)).get(ip)!
  async function* text() {
    let chunk: string[] = []
    let n = 0
    for (const request of sampleRequests({ ...SAMPLE_DEFAULTS, requests: count })) {
      chunk.push(logpushLine(request, n++))
      keep?.push({
        t: request.atMs - SAMPLE_DEFAULTS.startMs + 5_000,
        key: client(request.ip),
        cost: 1,
        status: request.status,
      })
      if (chunk.length === 10_000) {
        yield `${chunk.join('\n')}\n`
        chunk = []
      }
    }
    if (chunk.length > 0) yield `${chunk.join('\n')}\n`
  }
  await pipeline(Readable.from(text()), createGzip(), createWriteStream(path))
}

/** Rehearses the file, timing it and sampling the heap as it goes. */
async function timed(path: string) {
  const current = parseRules(benchCurrent(), 'current')
  const proposed = parseRules(benchProposed(), 'proposed')
  let heapMb = 0
  const started = performance.now()
  const cpu = process.cpuUsage()
  const report = await rehearse({
    current: { name: 'current', ruleSet: current },
    proposed: { name: 'proposed', ruleSet: proposed },
    traffic: [
      {
        name: path,
        open: () => Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>,
      },
    ],
    reorderMs: 60_000,
    skipBad: false,
    methodOverride: 'count',
    onProgress: () => {
      heapMb = Math.max(heapMb, process.memoryUsage().heapUsed / 2 ** 20)
    },
  })
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  return { report, seconds, cpuSeconds: (used.user + used.system) / 1e6, heapMb }
}

/**
 * Runs the benchmark.
 *
 * @param argv - `--requests <n>` (1,000,000), `--max-seconds <s>` (30)
 */
export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: 'string', default: '1000000' },
      'max-seconds': { type: 'string', default: '30' },
    },
  })
  const requests = Number(values.requests)
  const maxSeconds = Number(values['max-seconds'])
  const dir = mkdtempSync(join(tmpdir(), 'bench-rehearse-'))
  try {
    const big = join(dir, 'logpush.ndjson.gz')
    const small = join(dir, 'logpush-tenth.ndjson.gz')
    const arrivals: Arrival[] = []
    const made = performance.now()
    await writeTraffic(big, requests, arrivals)
    await writeTraffic(small, Math.round(requests / 10), undefined)
    const mb = (statSync(big).size / 2 ** 20).toFixed(1)
    console.log(
      `generated ${requests} Logpush lines (${mb} MiB gzipped) in ${((performance.now() - made) / 1000).toFixed(1)} s`
    )
    const tenth = await timed(small)
    const whole = await timed(big)
    const rules = parseRules(benchCurrent(), 'current').rules
    // The simulator's engine: each rule on every request, keyed by the address alone.
    const simulated = performance.now()
    runRules(arrivals, rules)
    const simulateS = (performance.now() - simulated) / 1000
    const { report } = whole
    const row = (
      name: string,
      lines: number,
      run: { seconds: number; cpuSeconds: number; heapMb: number }
    ) =>
      `${name.padEnd(28)}${String(lines).padStart(9)}  ${run.seconds.toFixed(1).padStart(6)} s  ${run.cpuSeconds.toFixed(1).padStart(6)} s  ${Math.round(
        lines / run.seconds
      )
        .toLocaleString('en-US')
        .padStart(9)}/s  ${run.heapMb.toFixed(0).padStart(5)} MiB`
    console.log(
      `\n${'run'.padEnd(28)}${'lines'.padStart(9)}  ${'wall'.padStart(8)}  ${'cpu'.padStart(8)}  ${'lines'.padStart(11)}  ${'heap at most'}`
    )
    console.log(row('rehearse, a tenth', Math.round(requests / 10), tenth))
    console.log(row('rehearse, 20 rules × 2 docs', requests, whole))
    console.log(
      `${'simulate (runRules), 20 rules'.padEnd(28)}${String(requests).padStart(9)}  ${simulateS.toFixed(1).padStart(6)} s  ${''.padStart(8)}  ${Math.round(
        requests / simulateS
      )
        .toLocaleString('en-US')
        .padStart(9)}/s  (in memory, every rule on every request)`
    )
    const r = report.requests
    console.log(
      `\n${r.total} requests: newly denied ${r.newlyDenied} (${r.newlyDeniedPercent.toFixed(3)}%), newly allowed ${r.newlyAllowed}; ${report.unjudged.length} rules not judged`
    )
    if (whole.seconds > maxSeconds) {
      console.error(
        `over the budget: ${whole.seconds.toFixed(1)} s for ${requests} lines (at most ${maxSeconds} s)`
      )
      return 1
    }
    return 0
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
