/**
 * @module test/support/stored-rules
 * The rules documents the Worker keeps in KV (the test's `RULES` namespace).
 */
import { env } from 'cloudflare:workers'
import { LAST_GOOD_KV_KEY, RULES_KV_KEY } from '../../src/provider/rules-source'

/** Deletes the override and the last good document: the bundled rules are in force again. */
export async function clearStoredRules(): Promise<void> {
  await env.RULES.delete(RULES_KV_KEY)
  await env.RULES.delete(LAST_GOOD_KV_KEY)
}
