/**
 * @module provider/rules-store
 * How rules documents are kept in Workers KV: the keys, the revision each validated writer
 * stamps in the key's metadata, and how a writer picks the next revision. Shared by the Worker
 * and `npm run rules -- push`.
 */
import { RuleConfigError } from '../errors'
import { parseRulesText, type RuleSet } from '../rules'

/** The KV key operators write: the document meant to be in force. */
export const RULES_KV_KEY = 'rules'

/** The KV key only validated writers write: the newest document known to be valid. */
export const LAST_GOOD_KV_KEY = 'rules:last-good'

/**
 * How long KV may keep serving a key's previous value after a write (ms). A value without a
 * revision that an isolate moved away from less than this long ago is taken as that stale copy.
 */
export const KV_STALE_MS = 60_000

/** The metadata a validated writer stores with a document. */
export interface RulesMetadata {
  /** Orders documents: a larger revision is newer. */
  revision: number
  /** When it was written (ISO 8601), for people. */
  updatedAt: string
}

/** One stored document as read back: `text` is null when the key is absent. */
export interface StoredRules {
  text: string | null
  /** The revision stamped by a validated writer; undefined for a hand-written value. */
  revision: number | undefined
  updatedAt: string | undefined
}

/**
 * The revision in a key's metadata, if it carries a usable one (anything else counts as a value
 * written by hand).
 *
 * @param metadata - the metadata as KV returns it
 */
export function revisionOf(metadata: unknown): number | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined
  const revision = (metadata as { revision?: unknown }).revision
  return typeof revision === 'number' && Number.isSafeInteger(revision) && revision >= 0
    ? revision
    : undefined
}

/**
 * The revision a writer stamps: the time in ms, or one more than any revision it has seen if
 * that is larger (a clock behind the last writer's still orders after it).
 *
 * @param nowMs - the writer's clock
 * @param seen - revisions the writer knows of (undefined ones are ignored)
 */
export function nextRevision(nowMs: number, ...seen: (number | undefined)[]): number {
  return Math.max(Math.floor(nowMs), ...seen.map((r) => (r === undefined ? 0 : r + 1)))
}

/**
 * The metadata for a document written now.
 *
 * @param revision - from {@link nextRevision}
 * @param nowMs - the writer's clock
 */
export function metadataFor(revision: number, nowMs: number): RulesMetadata {
  return { revision, updatedAt: new Date(nowMs).toISOString() }
}

/**
 * Reads one key with its metadata in a single call.
 *
 * @param kv - the namespace
 * @param key - {@link RULES_KV_KEY} or {@link LAST_GOOD_KV_KEY}
 */
export async function readStored(kv: KVNamespace, key: string): Promise<StoredRules> {
  const { value, metadata } = await kv.getWithMetadata(key, 'text')
  const updatedAt = (metadata as { updatedAt?: unknown } | null)?.updatedAt
  return {
    text: value,
    revision: revisionOf(metadata),
    updatedAt: typeof updatedAt === 'string' ? updatedAt : undefined,
  }
}

/**
 * Validates a stored document. Anything that breaks validation is a refusal, never a crash: a
 * bad value in KV must leave the rules in force, whatever it does to the parser.
 *
 * @param text - the stored value
 * @param source - names it in problems (`kv:rules`)
 */
export function parseStored(text: string, source: string): RuleSet | RuleConfigError {
  try {
    return parseRulesText(text, source)
  } catch (error) {
    if (error instanceof RuleConfigError) return error
    return new RuleConfigError(source, [`(document): could not be validated: ${String(error)}`])
  }
}
