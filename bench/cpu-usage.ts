// Who used the CPU during a measured run: the load generator (this process), the origin child,
// workerd (Miniflare's child) and the whole host. Linux /proc only; elsewhere it reports nothing.
import { readdirSync, readFileSync } from 'node:fs'
import { cpus } from 'node:os'

/** CPU used over an interval, in percent of one core (the host can reach cores x 100). */
export interface CpuShare {
  loadgen: number
  origin: number
  workerd: number
  /** CPU time workerd used over the interval, in ms (10 ms resolution). */
  workerdMs: number
  host: number
  /** Host CPU not used by the three above: other processes and the kernel's own work. */
  other: number
}

/** Counters at one instant; only meaningful to `cpuShare`. */
export interface CpuSnapshot {
  at: number
  self: { user: number; system: number }
  origin: number
  workerd: number
  hostBusy: number
  hostTotal: number
}

// USER_HZ: the unit of /proc tick counters, 100 on every mainstream Linux build.
const TICKS_PER_SECOND = 100

/** Reads the counters, or returns undefined where there is no /proc. */
export function cpuSnapshot(originPid: number): CpuSnapshot | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number)
    const hostTotal = fields.reduce((sum, value) => sum + value, 0)
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
    const workerd = childPids('workerd').reduce((sum, pid) => sum + processTicks(pid), 0)
    return {
      at: performance.now(),
      self: process.cpuUsage(),
      origin: processTicks(originPid),
      workerd,
      hostBusy: hostTotal - idle,
      hostTotal,
    }
  } catch {
    return undefined
  }
}

/** The CPU each role used between two snapshots. */
export function cpuShare(
  before: CpuSnapshot | undefined,
  after: CpuSnapshot | undefined
): CpuShare | undefined {
  if (before === undefined || after === undefined) return undefined
  const seconds = (after.at - before.at) / 1000
  const selfMicros = after.self.user + after.self.system - before.self.user - before.self.system
  const hostShare = (after.hostBusy - before.hostBusy) / (after.hostTotal - before.hostTotal)
  const loadgen = Math.round((selfMicros / 1e6 / seconds) * 100)
  const origin = Math.round(((after.origin - before.origin) / TICKS_PER_SECOND / seconds) * 100)
  const workerd = Math.round(((after.workerd - before.workerd) / TICKS_PER_SECOND / seconds) * 100)
  const host = Math.round(hostShare * cpus().length * 100)
  const workerdMs = ((after.workerd - before.workerd) / TICKS_PER_SECOND) * 1000
  return {
    loadgen,
    origin,
    workerd,
    workerdMs,
    host,
    other: Math.max(0, host - loadgen - origin - workerd),
  }
}

function processTicks(pid: number): number {
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th overall.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(rest[11]) + Number(rest[12])
}

function childPids(command: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (name === command && parent === process.pid) pids.push(Number(entry))
    } catch {
      // The process exited between listing and reading.
    }
  }
  return pids
}
