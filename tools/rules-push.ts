/**
 * @module tools/rules-push
 * What `npm run rules -- push` asks wrangler to do: list the rules keys to learn the newest
 * revision, then write the document to `rules` and `rules:last-good` with the next one.
 */
import {
  LAST_GOOD_KV_KEY,
  metadataFor,
  nextRevision,
  revisionOf,
  RULES_KV_KEY,
} from '../src/provider/rules-store'

/** Where to write: wrangler's namespace options, as given to `push`. */
export interface PushTarget {
  local: boolean
  persistTo?: string | undefined
  env?: string | undefined
}

/** The options every wrangler KV call of a push shares (wrangler 4 reads local by default). */
function targetArgs(target: PushTarget): string[] {
  const args = ['--binding', 'RULES', target.local ? '--local' : '--remote']
  if (target.persistTo) args.push('--persist-to', target.persistTo)
  if (target.env) args.push('--env', target.env)
  return args
}

/**
 * The `wrangler kv key list` arguments that show the rules keys with their metadata.
 *
 * @param target - where the push writes
 */
export function listArgs(target: PushTarget): string[] {
  return ['kv', 'key', 'list', '--prefix', RULES_KV_KEY, ...targetArgs(target)]
}

/**
 * The revisions of the rules keys in `wrangler kv key list` output; empty if it cannot be read.
 *
 * @param output - what the list command printed
 */
export function listedRevisions(output: string): number[] {
  let keys: unknown
  try {
    keys = JSON.parse(output.slice(output.indexOf('[')))
  } catch {
    return []
  }
  if (!Array.isArray(keys)) return []
  return keys.flatMap((key: { name?: unknown; metadata?: unknown }) => {
    const revision = revisionOf(key?.metadata)
    const ours = key?.name === RULES_KV_KEY || key?.name === LAST_GOOD_KV_KEY
    return ours && revision !== undefined ? [revision] : []
  })
}

/**
 * The two `wrangler kv key put` argument lists of a push, both stamped with the next revision:
 * after the time and after every revision listed.
 *
 * @param path - the validated document
 * @param target - where to write
 * @param nowMs - the clock
 * @param listed - from {@link listedRevisions}
 */
export function putArgs(
  path: string,
  target: PushTarget,
  nowMs: number,
  listed: number[]
): { revision: number; commands: string[][] } {
  const revision = nextRevision(nowMs, ...listed)
  const metadata = JSON.stringify(metadataFor(revision, nowMs))
  const commands = [RULES_KV_KEY, LAST_GOOD_KV_KEY].map((key) => [
    'kv',
    'key',
    'put',
    key,
    '--path',
    path,
    '--metadata',
    metadata,
    ...targetArgs(target),
  ])
  return { revision, commands }
}
