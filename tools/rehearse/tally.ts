/**
 * @module tools/rehearse/tally
 * The two documents' decisions compared, request by request: per rule, per minute and in all,
 * who is denied under the proposed rules that was not under the rules in force, and who the
 * other way round. Memory: a row per rule and per minute, and the keys whose requests changed
 * outcome. Pure.
 */
import type { DecisionView } from './engine'
import type { MinuteRow, RuleRow, Totals } from './report-types'

/** Which document a count is under. */
type Side = 'current' | 'proposed'

const sides = <T>(make: () => T): Record<Side, T> => ({ current: make(), proposed: make() })

interface Row {
  id: string
  inCurrent: boolean
  inProposed: boolean
  matched: number
  /** The last request counted in `matched` (a request matching under both counts once). */
  lastRequest: number
  /** Requests it refused under each document. */
  denied: Record<Side, number>
  /** Requests it would have refused in shadow mode. */
  wouldDeny: Record<Side, number>
  /** Requests it refused under one document only: newly allowed (current), newly denied (proposed). */
  changed: Record<Side, number>
  /** Their keys, each with how often and first when. */
  keys: Record<Side, Map<string, { count: number; firstAtMs: number }>>
}

type Counts = Omit<MinuteRow, 'minute'>

/** The comparison, filled a request at a time. */
export class Tally {
  readonly #rows = new Map<string, Row>()
  readonly #minutes = new Map<number, Counts>()
  readonly #totals: Counts = blank()
  #requests = 0

  /**
   * @param currentIds - the rule ids of the rules in force, in order
   * @param proposedIds - the proposed rule ids, in order
   */
  constructor(currentIds: readonly string[], proposedIds: readonly string[]) {
    for (const id of [...proposedIds, ...currentIds]) {
      if (this.#rows.has(id)) continue
      this.#rows.set(id, {
        id,
        inCurrent: currentIds.includes(id),
        inProposed: proposedIds.includes(id),
        matched: 0,
        lastRequest: -1,
        denied: sides(() => 0),
        wouldDeny: sides(() => 0),
        changed: sides(() => 0),
        keys: sides(() => new Map()),
      })
    }
  }

  /**
   * Counts one request.
   *
   * @param atMs - its time
   * @param current - its decision under the rules in force
   * @param proposed - its decision under the proposed rules
   */
  add(atMs: number, current: DecisionView, proposed: DecisionView): void {
    const request = this.#requests++
    const refusedNow = current.outcome !== 'allowed'
    const refusedThen = proposed.outcome !== 'allowed'
    const newlyDenied = refusedThen && !refusedNow
    const newlyAllowed = refusedNow && !refusedThen
    const minuteMs = Math.floor(atMs / 60_000) * 60_000
    let minute = this.#minutes.get(minuteMs)
    if (!minute) this.#minutes.set(minuteMs, (minute = blank()))
    const count = (counts: Counts) => {
      counts.requests++
      if (refusedNow) counts.deniedCurrent++
      if (refusedThen) counts.deniedProposed++
      if (newlyDenied) counts.newlyDenied++
      if (newlyAllowed) counts.newlyAllowed++
    }
    count(minute)
    count(this.#totals)
    this.#count('current', current.rules, request, newlyAllowed, atMs)
    this.#count('proposed', proposed.rules, request, newlyDenied, atMs)
  }

  /** One document's verdicts on a request; `changed`: its outcome differs under the other. */
  #count(
    side: Side,
    verdicts: DecisionView['rules'],
    request: number,
    changed: boolean,
    atMs: number
  ): void {
    for (const verdict of verdicts) {
      const row = this.#rows.get(verdict.check.rule.id)!
      if (row.lastRequest !== request) {
        row.lastRequest = request
        row.matched++
      }
      if (!refused(verdict)) {
        if (verdict.decision?.allowed === false) row.wouldDeny[side]++
        continue
      }
      row.denied[side]++
      if (!changed) continue
      row.changed[side]++
      const key = row.keys[side].get(verdict.check.key)
      if (key) key.count++
      else row.keys[side].set(verdict.check.key, { count: 1, firstAtMs: atMs })
    }
  }

  /** The rows per rule (proposed order, then rules only in force), per minute, and in all. */
  result(): { rules: RuleRow[]; minutes: MinuteRow[]; requests: Totals } {
    const rules = [...this.#rows.values()].map(rowOf)
    const totals = this.#totals
    return {
      rules,
      minutes: minuteRows(this.#minutes),
      requests: {
        total: totals.requests,
        deniedCurrent: totals.deniedCurrent,
        deniedProposed: totals.deniedProposed,
        newlyDenied: totals.newlyDenied,
        newlyAllowed: totals.newlyAllowed,
        newlyDeniedPercent:
          totals.requests === 0 ? 0 : (100 * totals.newlyDenied) / totals.requests,
        newlyDeniedKeys: rules.reduce((sum, row) => sum + row.keysNewlyDenied, 0),
      },
    }
  }
}

/** Whether a rule's verdict refuses the request (in shadow, it only would). */
function refused({ check, decision }: DecisionView['rules'][number]): boolean {
  return decision !== undefined && !decision.allowed && !check.shadow
}

function blank(): Counts {
  return { requests: 0, deniedCurrent: 0, deniedProposed: 0, newlyDenied: 0, newlyAllowed: 0 }
}

function rowOf(row: Row): RuleRow {
  const denied = row.keys.proposed
  let affected = denied.size
  for (const key of row.keys.current.keys()) if (!denied.has(key)) affected++
  const top = [...denied]
    .sort(([, a], [, b]) => b.count - a.count || a.firstAtMs - b.firstAtMs)
    .slice(0, 10)
    .map(([key, { count, firstAtMs }]) => ({
      key,
      count,
      firstAt: new Date(firstAtMs).toISOString(),
    }))
  return {
    id: row.id,
    in: row.inCurrent && row.inProposed ? 'both' : row.inCurrent ? 'current' : 'proposed',
    matched: row.matched,
    deniedCurrent: row.denied.current,
    deniedProposed: row.denied.proposed,
    newlyDenied: row.changed.proposed,
    newlyAllowed: row.changed.current,
    keysAffected: affected,
    keysNewlyDenied: denied.size,
    topNewlyDenied: top,
    ...(row.wouldDeny.current > 0 ? { wouldDenyCurrent: row.wouldDeny.current } : {}),
    ...(row.wouldDeny.proposed > 0 ? { wouldDenyProposed: row.wouldDeny.proposed } : {}),
  }
}

/** Every minute from the first to the last, quiet ones as zeros (a chart's gaps are real). */
function minuteRows(minutes: Map<number, Counts>): MinuteRow[] {
  if (minutes.size === 0) return []
  let first = Number.POSITIVE_INFINITY
  let last = Number.NEGATIVE_INFINITY
  for (const at of minutes.keys()) {
    first = Math.min(first, at)
    last = Math.max(last, at)
  }
  const rows: MinuteRow[] = []
  for (let at = first; at <= last; at += 60_000)
    rows.push({ minute: new Date(at).toISOString(), ...(minutes.get(at) ?? blank()) })
  return rows
}
