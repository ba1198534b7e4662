/**
 * @module tools/fuzz-report
 * What `npm run fuzz` counts: statuses per kind of input, log events by level, and failures.
 */

/** Counts of answers, and the failures found while sending. */
export class Tally {
  readonly counts = new Map<string, number>()
  readonly failures: string[] = []

  /**
   * @param kind - a generated request, or a rules document
   * @param status - the HTTP status, or how it was handled when not sent over HTTP
   * @param fromOrigin - whether the (demo) origin answered rather than the limiter
   */
  status(kind: 'request' | 'document', status: number | string, fromOrigin = false): void {
    const key = `${kind} ${status}${fromOrigin ? ' (origin)' : ''}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  failure(message: string): void {
    this.failures.push(message)
  }

  report(): string {
    return `answers:\n${table(this.counts)}`
  }
}

/** Events the Worker logs as JSON lines: expected under fuzzing, but counted. */
const UNEXPECTED_EVENTS = new Set(['internal-error'])

/** workerd's log lines: the Worker's JSON events by level and name, and anything uncaught. */
export class FuzzLog {
  readonly counts = new Map<string, number>()
  readonly failures: string[] = []

  /** Takes one structured log line from workerd. */
  record({ level, message }: { level: string; message: string }): void {
    const event = eventOf(message)
    const key = `${level} ${event ?? '(not an event)'}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
    if (event !== undefined && UNEXPECTED_EVENTS.has(event))
      this.failures.push(`logged ${message.slice(0, 500)}`)
    else if (event === undefined && /uncaught|exception|error/i.test(message))
      this.failures.push(`workerd logged (${level}): ${message.slice(0, 500)}`)
  }

  report(): string {
    return `log lines:\n${table(this.counts)}`
  }
}

function eventOf(message: string): string | undefined {
  if (!message.startsWith('{')) return undefined
  try {
    const event = (JSON.parse(message) as { event?: unknown }).event
    return typeof event === 'string' ? event : undefined
  } catch {
    return undefined
  }
}

function table(counts: Map<string, number>): string {
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .map(([key, n]) => `  ${key.padEnd(44)} ${n.toLocaleString('en').padStart(9)}`)
    .join('\n')
}
