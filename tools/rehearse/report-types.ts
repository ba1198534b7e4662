/**
 * @module tools/rehearse/report-types
 * The rehearsal's report, as JSON has it (`--json`, `report.json`, the operator page): its types
 * alone, importing nothing, so the page can read a report without the code that makes one.
 */

/** A key newly denied under a rule: how often, and first when (ISO 8601). */
export interface KeyCount {
  key: string
  count: number
  firstAt: string
}

/** One rule's part in the comparison (the report's `rules`). */
export interface RuleRow {
  id: string
  /** Which document has the rule. */
  in: 'both' | 'current' | 'proposed'
  /** Requests it applied to, under either document. */
  matched: number
  /** Requests it refused under the rules in force. */
  deniedCurrent: number
  /** Requests it refuses under the proposed rules. */
  deniedProposed: number
  /** Requests it refuses under the proposed rules that the rules in force let through. */
  newlyDenied: number
  /** Requests it refused under the rules in force that the proposed rules let through. */
  newlyAllowed: number
  /** Distinct keys of its with a request newly denied or newly allowed. */
  keysAffected: number
  /** Distinct keys of its with a request newly denied. */
  keysNewlyDenied: number
  /** Its keys with the most requests newly denied (at most 10). */
  topNewlyDenied: KeyCount[]
  /** Requests it would have refused in shadow mode, under each document where it is in shadow. */
  wouldDenyCurrent?: number
  wouldDenyProposed?: number
}

/** One minute of the traffic (the report's `minutes`). */
export interface MinuteRow {
  /** The minute's start, ISO 8601. */
  minute: string
  requests: number
  deniedCurrent: number
  deniedProposed: number
  newlyDenied: number
  newlyAllowed: number
}

/** The whole traffic (the report's `requests`). */
export interface Totals {
  /** Requests replayed under both documents. */
  total: number
  /** Refused (429, 403, 400) or degraded under the rules in force. */
  deniedCurrent: number
  deniedProposed: number
  newlyDenied: number
  newlyAllowed: number
  /** `newlyDenied` as a percentage of `total`. */
  newlyDeniedPercent: number
  /** Distinct keys newly denied, over all rules (a key is a rule's). */
  newlyDeniedKeys: number
}

/** A rule or list not judged, with what it needs and the requests it may apply to. */
export interface UnjudgedRow {
  rule: string
  needs: string
  in: 'both' | 'current' | 'proposed'
  /** Requests its match held for, as far as the traffic tells (under the document that has it). */
  requests: number
}

/** Lines left out under `--skip-bad`. */
export interface Skipped {
  count: number
  /** The first ones (at most 20), each with its file, line and problem. */
  lines: { file: string; line: number; problem: string }[]
}

/** A traffic file as the report names it. */
export interface TrafficFileRow {
  name: string
  format: string
  /** The request fields it carries, and its headers: `all`, `logged` or a list. */
  fields: string[]
  headers: 'all' | 'logged' | string[]
}

/** The report (`--json`, and `report.json` under `--out`). */
export interface Report {
  /** How keys were decided: as their Durable Objects decide each request. */
  mode: 'exact'
  current: string
  proposed: string
  traffic: { files: TrafficFileRow[]; from?: string; to?: string }
  requests: Totals
  rules: RuleRow[]
  unjudged: UnjudgedRow[]
  minutes: MinuteRow[]
  skipped: Skipped
  notes: string[]
  /** The `--fail-if` conditions, judged (absent without any). */
  verdict?: Judged[]
}

/** A condition judged on the traffic (the report's `verdict`). */
export interface Judged {
  condition: string
  /** The measured value, as the condition states it (`0.12%`, `7`). */
  value: string
  crossed: boolean
}
