// The two alarm scenarios: what the cleanup of many idle keys costs, alone (`alarm-cost`) and
// while a hot key is being served (`alarms-due`).
//
// Design: each limiter runs with a short period P (scenarios.ts picks it so that creating the
// keys fits in one window). The bench waits for a window boundary, creates `keys` distinct keys
// (one request each), then sleeps until the first of their cleanup alarms is due, and starts
// measuring just before it. For the project, whose sliding-window state expires two aligned
// periods after the window it was charged in, every key created in one window expires at the
// same instant, as after any traffic spike, and the alarms come due spread over the next period
// (each key's offset is a hash of its name); the peer arms each key's alarm one window after its
// first hit, so its alarms come due spread over the time the keys took to create; the naive
// limiter sets none. Instances are fresh per scenario, so no alarm left by another scenario
// fires here (the artefact issue 10 describes, of paused Workers firing all at once, cannot occur).
import { cpuShare, cpuSnapshot } from './cpu-usage.ts'
import { readCounters } from './instrument.ts'
import { alarmDueOf } from './limiters.ts'
import { ipSource, warmUp } from './load.ts'
import {
  measureRun,
  withTarget,
  type RunContext,
  type RunRecord,
  type TargetName,
} from './runner.ts'
import type { Scenario } from './scenarios.ts'

const POLL_MS = 250
/** The alarms are taken as done after this long without one more. */
const SETTLED_MS = 2_000
const MAX_DRAIN_MS = 120_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

/** Creates the idle keys from a window boundary on; resolves when their first alarm is due. */
async function createIdleKeys(
  context: RunContext,
  target: TargetName,
  url: string,
  periodS: number
): Promise<{ dueAtMs: number | undefined; details: Record<string, number | string> }> {
  const periodMs = periodS * 1000
  await sleep(Math.ceil(Date.now() / periodMs) * periodMs - Date.now() + 50)
  const createdAtMs = Date.now()
  await warmUp(url, ipSource('many', context.keys), context.keys)
  const creationSeconds = (Date.now() - createdAtMs) / 1000
  const due = target === 'bare' ? undefined : alarmDueOf(target)
  const dueAtMs = due?.(createdAtMs, periodMs)
  const details: Record<string, number | string> = { periodS, keys: context.keys, creationSeconds }
  if (dueAtMs === undefined) details.note = 'sets no cleanup alarms'
  else if (dueAtMs < Date.now())
    details.note = `alarms began ${((Date.now() - dueAtMs) / 1000).toFixed(1)} s before creation ended`
  return { dueAtMs, details }
}

/** The hot key measured while the idle keys' alarms come due. */
export function runAlarmsDue(
  context: RunContext,
  scenario: Scenario,
  target: TargetName,
  rep: number,
  periodS: number
): Promise<RunRecord> {
  const spec = { ...scenario.spec, periodS }
  return withTarget(context, { ...scenario, spec }, target, rep, async (instance) => {
    const nextIp = ipSource('hot')
    await warmUp(instance.url, nextIp)
    const { dueAtMs, details } = await createIdleKeys(context, target, instance.url, periodS)
    // A quarter of the run (at most a second) before the first alarm, so the run sees the onset.
    const leadMs = Math.min(1000, (context.duration * 1000) / 4)
    if (dueAtMs !== undefined) await sleep(dueAtMs - leadMs - Date.now())
    const measured = await measureRun(context, target, instance.url, nextIp)
    return { measured, details: { ...details, leadMs } }
  })
}

/** The idle keys' alarms with no load: how long they take to drain, and workerd CPU per alarm. */
export function runAlarmCost(
  context: RunContext,
  scenario: Scenario,
  target: TargetName,
  rep: number,
  periodS: number
): Promise<RunRecord> {
  if (target === 'bare' || alarmDueOf(target) === undefined)
    return Promise.resolve({ scenario: scenario.name, target, rep, skipped: 'sets no alarms' })
  const spec = { ...scenario.spec, periodS }
  return withTarget(context, { ...scenario, spec }, target, rep, async (instance) => {
    const { dueAtMs, details } = await createIdleKeys(context, target, instance.url, periodS)
    if (dueAtMs === undefined) return { skipped: 'sets no alarms', details }
    await sleep(dueAtMs - 500 - Date.now())
    const cpuBefore = cpuSnapshot(context.origin.pid)
    const start = await readCounters(instance.url)
    let last = start.alarms
    let lastChangeMs = Date.now()
    const giveUpMs = Math.max(Date.now(), dueAtMs) + MAX_DRAIN_MS
    for (;;) {
      await sleep(POLL_MS)
      const { alarms } = await readCounters(instance.url)
      if (alarms !== last) [last, lastChangeMs] = [alarms, Date.now()]
      const settled = Date.now() - lastChangeMs > SETTLED_MS && Date.now() > dueAtMs + SETTLED_MS
      if (alarms - start.alarms >= context.keys || settled || Date.now() > giveUpMs) break
    }
    const cpu = cpuShare(cpuBefore, cpuSnapshot(context.origin.pid))
    const alarms = last - start.alarms
    const drainSeconds = Math.max(0, (lastChangeMs - dueAtMs) / 1000)
    return {
      details: {
        ...details,
        alarms,
        drainSeconds,
        alarmsPerSecond: drainSeconds > 0 ? alarms / drainSeconds : alarms,
        ...(cpu && alarms > 0 ? { cpuMsPerAlarm: cpu.workerdMs / alarms } : {}),
      },
    }
  })
}
