/**
 * @module rules/placement
 * Where a rule's Durable Objects live: a location hint (where a key's object is created) and a
 * jurisdiction (where its objects always run and store data).
 */
import * as v from 'valibot'
import { LOCATION_HINTS, type Jurisdiction, type LocationHint, type Placement } from '../types'
import { show, type Issue } from './schema-parts'

/** Cloudflare's Durable Object jurisdictions. */
export const JURISDICTIONS = [
  'eu',
  'fedramp',
  'fedramp-high',
  'us',
] as const satisfies readonly Jurisdiction[]

const quoted = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ')

/** `locationHint` as written. */
export const LocationHintSchema = v.picklist(
  LOCATION_HINTS,
  (i: Issue) => `${show(i.input)} is not a location hint (use one of ${quoted(LOCATION_HINTS)})`
)

/** `jurisdiction` as written (a rule's, or the document's for every rule). */
export const JurisdictionSchema = v.picklist(
  JURISDICTIONS,
  (i: Issue) => `${show(i.input)} is not a jurisdiction (use one of ${quoted(JURISDICTIONS)})`
)

/**
 * A rule's placement: its own jurisdiction, else the document's; `undefined` when it has none.
 *
 * @param rule - the validated rule's placement fields
 * @param documentJurisdiction - the document's `jurisdiction`
 */
export function compilePlacement(
  rule: { locationHint?: LocationHint; jurisdiction?: Jurisdiction },
  documentJurisdiction: Jurisdiction | undefined
): Placement | undefined {
  const jurisdiction = rule.jurisdiction ?? documentJurisdiction
  const placement: Placement = {}
  if (rule.locationHint) placement.locationHint = rule.locationHint
  if (jurisdiction) placement.jurisdiction = jurisdiction
  return placement.locationHint || placement.jurisdiction ? Object.freeze(placement) : undefined
}
