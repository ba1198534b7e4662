/**
 * @module limiter/object-name
 * Which Durable Object a limit key is: its name (bounded in length), its jurisdiction, and the
 * stub that reaches it.
 */
import type { Placement } from '../../types'

/** What names an object: the rule (its id and placement) and the limit key. */
interface ObjectRef {
  rule: { readonly id: string; readonly placement?: Placement }
  key: string
}

/** Names longer than this are replaced by a digest. */
export const MAX_OBJECT_NAME_LENGTH = 256

/**
 * The Durable Object name for a limit key. Short keys are used as they are (readable in logs
 * and the dashboard); long ones become `<rule id>|#<SHA-256, base64url>`, so a client sending
 * a huge header cannot make names unbounded.
 *
 * @param ruleId - the rule's id (the part before the first `|`)
 * @param key - the full limit key from `limitKey()`
 */
export async function objectName(ruleId: string, key: string): Promise<string> {
  if (key.length <= MAX_OBJECT_NAME_LENGTH) return key
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key))
  return `${ruleId}|#${base64Url(new Uint8Array(digest))}`
}

function base64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The object's name; a short key is its own name (no digest, no promise to wait for). */
export function nameOf({ rule, key }: ObjectRef): string | Promise<string> {
  return key.length <= MAX_OBJECT_NAME_LENGTH ? key : objectName(rule.id, key)
}

/** Which object a name is, across jurisdictions (a jurisdiction is a namespace of its own). */
export function identity(rule: ObjectRef['rule'], name: string): string {
  const jurisdiction = rule.placement?.jurisdiction
  // Rule ids hold no "/", and every name starts with one: no name looks like this.
  return jurisdiction ? `${jurisdiction}/${name}` : name
}

/**
 * What of a Durable Object namespace naming a stub takes, whatever its objects' class: a
 * `DurableObjectNamespace` is one. Code that the objects themselves run (leased quotas' lessees)
 * reaches other objects of their class through it, without naming the class.
 */
export interface ObjectNamespace<Stub = unknown> {
  getByName(name: string, options?: DurableObjectNamespaceGetDurableObjectOptions): Stub
  jurisdiction(jurisdiction: DurableObjectJurisdiction): ObjectNamespace<Stub>
}

/**
 * A stub for the key's object, in the rule's jurisdiction, created near its location hint.
 * A stub per call: the runtime ties a stub to the request that made it, so none is kept.
 */
export function stubOf<Stub>(
  namespace: ObjectNamespace<Stub>,
  rule: ObjectRef['rule'],
  name: string
): Stub {
  const placement = rule.placement
  const placed = placement?.jurisdiction
    ? namespace.jurisdiction(placement.jurisdiction)
    : namespace
  return placement?.locationHint
    ? placed.getByName(name, { locationHint: placement.locationHint })
    : placed.getByName(name)
}
