/**
 * @module tools/simulate/trace
 * Recorded traces for the simulator: CSV with a header (`t,key,cost,status`) or JSON Lines
 * (`{"t":ms,"key":"…","cost":n,"status":401}`); `cost` and `status` are optional (`status`,
 * the origin's answer, is what rules counting responses need). Pure: the caller reads the file.
 */
import { MAX_COST } from '../../src/rules/cost'
import { sortByTime, type Arrival } from './profile'

/** A trace that cannot be replayed; the message names the source and, when known, the line. */
export class TraceError extends Error {
  override name = 'TraceError'
  /** The file name. */
  readonly file: string
  /** 1-based line number of the problem, if it is on a line. */
  readonly line: number | undefined
  /** What is wrong, without the file and line. */
  readonly problem: string

  /**
   * @param source - the file name
   * @param line - 1-based line number, or undefined for the file as a whole
   * @param problem - what is wrong
   */
  constructor(source: string, line: number | undefined, problem: string) {
    super(line === undefined ? `${source}: ${problem}` : `${source}:${line}: ${problem}`)
    this.file = source
    this.line = line
    this.problem = problem
  }
}

const TIME = /^[0-9]+(\.[0-9]+)?$/
const WHOLE = /^[0-9]+$/

/**
 * Parses a trace, CSV or JSON Lines (told apart by whether the first non-blank line starts with
 * `{`). Blank lines are skipped; extra CSV columns and extra JSON fields are ignored.
 *
 * @param text - the file's contents
 * @param source - the file name, for messages
 * @returns the requests sorted by `t`, stably (file order among equal times)
 * @throws {TraceError} for the first bad line, or a trace with no requests
 */
export function parseTrace(text: string, source: string): Arrival[] {
  const lines = text.replace(/^\uFEFF/, '').split('\n')
  const first = lines.findIndex((line) => line.trim() !== '')
  if (first === -1) throw new TraceError(source, undefined, 'the trace has no requests')
  const arrivals = lines[first]!.trimStart().startsWith('{')
    ? parseJsonLines(lines, source)
    : parseCsv(lines, first, source)
  if (arrivals.length === 0) throw new TraceError(source, undefined, 'the trace has no requests')
  return sortByTime(arrivals)
}

function parseJsonLines(lines: string[], source: string): Arrival[] {
  const arrivals: Arrival[] = []
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return
    const fail = (problem: string) => new TraceError(source, index + 1, problem)
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      throw fail(`not valid JSON: ${(error as Error).message}`)
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw fail('expected an object like {"t":0,"key":"a","cost":1}')
    const { t, key, cost, status } = value as Record<string, unknown>
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0)
      throw fail(`"t" must be a number of ms ≥ 0, got ${JSON.stringify(t)}`)
    if (typeof key !== 'string' || key === '')
      throw fail(`"key" must be a non-empty string, got ${JSON.stringify(key)}`)
    if (cost !== undefined && !(Number.isInteger(cost) && isCost(cost as number)))
      throw fail(`"cost" must be a whole number from 1 to ${MAX_COST}, got ${JSON.stringify(cost)}`)
    if (status !== undefined && !isStatus(status))
      throw fail(`"status" must be an HTTP status from 100 to 599, got ${JSON.stringify(status)}`)
    const arrival: Arrival = { t, key, cost: (cost as number | undefined) ?? 1 }
    if (status !== undefined) arrival.status = status as number
    arrivals.push(arrival)
  })
  return arrivals
}

function parseCsv(lines: string[], headerIndex: number, source: string): Arrival[] {
  const header = splitCsvLine(lines[headerIndex]!, source, headerIndex + 1).map((name) =>
    name.trim().toLowerCase()
  )
  const column = (name: string) => header.indexOf(name)
  const [tAt, keyAt, costAt, statusAt] = [
    column('t'),
    column('key'),
    column('cost'),
    column('status'),
  ]
  if (tAt === -1 || keyAt === -1)
    throw new TraceError(
      source,
      headerIndex + 1,
      `expected a header with columns "t" and "key" (and optionally "cost" and "status"), got ${JSON.stringify(lines[headerIndex]!.trim())}`
    )
  const arrivals: Arrival[] = []
  for (let index = headerIndex + 1; index < lines.length; index++) {
    const raw = lines[index]!
    if (raw.trim() === '') continue
    const fail = (problem: string) => new TraceError(source, index + 1, problem)
    const cells = splitCsvLine(raw, source, index + 1)
    if (cells.length !== header.length)
      throw fail(`expected ${header.length} fields like the header, got ${cells.length}`)
    const t = cells[tAt]!.trim()
    const key = cells[keyAt]!
    const cost = costAt === -1 ? '' : cells[costAt]!.trim()
    if (!TIME.test(t)) throw fail(`"t" must be a number of ms ≥ 0, got ${JSON.stringify(t)}`)
    if (key === '') throw fail('"key" must not be empty')
    if (cost !== '' && !(WHOLE.test(cost) && isCost(Number(cost))))
      throw fail(`"cost" must be a whole number from 1 to ${MAX_COST}, got ${JSON.stringify(cost)}`)
    const status = statusAt === -1 ? '' : cells[statusAt]!.trim()
    if (status !== '' && !(WHOLE.test(status) && isStatus(Number(status))))
      throw fail(`"status" must be an HTTP status from 100 to 599, got ${JSON.stringify(status)}`)
    const arrival: Arrival = { t: Number(t), key, cost: cost === '' ? 1 : Number(cost) }
    if (status !== '') arrival.status = Number(status)
    arrivals.push(arrival)
  }
  return arrivals
}

/**
 * Splits one CSV line (RFC 4180 quoting, no line breaks inside fields; a trailing CR dropped).
 *
 * @param raw - the line
 * @param source - the file name, for messages
 * @param line - its 1-based number, for messages
 * @throws {TraceError} for an unterminated quoted field or text after one
 */
export function splitCsvLine(raw: string, source: string, line: number): string[] {
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
  const cells: string[] = []
  let at = 0
  for (;;) {
    if (text[at] === '"') {
      let cell = ''
      let end = at + 1
      for (;;) {
        const quote = text.indexOf('"', end)
        if (quote === -1) throw new TraceError(source, line, 'unterminated quoted field')
        cell += text.slice(end, quote)
        if (text[quote + 1] !== '"') {
          end = quote + 1
          break
        }
        cell += '"'
        end = quote + 2
      }
      if (end < text.length && text[end] !== ',')
        throw new TraceError(source, line, 'unexpected text after a quoted field')
      cells.push(cell)
      at = end
    } else {
      const comma = text.indexOf(',', at)
      cells.push(text.slice(at, comma === -1 ? text.length : comma))
      at = comma === -1 ? text.length : comma
    }
    if (at >= text.length) return cells
    at++ // the comma
  }
}

function isStatus(status: unknown): boolean {
  return Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599
}

function isCost(cost: number): boolean {
  return cost >= 1 && cost <= MAX_COST
}
