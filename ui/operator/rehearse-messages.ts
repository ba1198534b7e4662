/**
 * @module ui/rehearse-messages
 * What the page and its rehearsal worker say to each other. Types only.
 */
import type { Report } from '../../tools/rehearse/report-types'

/** The page's ask: the two documents and the files dropped. */
export interface RehearseAsk {
  /** The document in force, as `GET <prefix>/rules` gave it. */
  current: unknown
  /** The editor's text. */
  proposed: string
  files: File[]
  /** Count and name bad lines instead of stopping at the first. */
  skipBad: boolean
}

/** The worker's answers: progress as it goes, then the report or what stopped it. */
export type RehearseAnswer =
  | { kind: 'progress'; requests: number; atMs: number }
  | { kind: 'report'; report: Report }
  | { kind: 'error'; message: string; problems: string[] }
