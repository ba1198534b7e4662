/**
 * @module tools/cli/suggest
 * What a field the validator calls unknown most likely meant, for `rules validate`: a known
 * field of the same object spelt a little differently (`"method"`: did you mean `"methods"`?),
 * or a known field of the object above or below it (`"methods"` belongs under `"match"`). The
 * fields come from the validation schema itself, read along the problem's path in the document
 * as written. Used by the command line only, so the Worker carries none of it.
 */
import { RulesDocumentSchema } from '../../src/rules/schema'

/** The parts of a valibot schema this reads: objects, and what wraps or holds them. */
interface SchemaNode {
  type: string
  entries?: Record<string, SchemaNode>
  wrapped?: SchemaNode
  item?: SchemaNode
  value?: SchemaNode
  key?: string | SchemaNode
  options?: SchemaNode[]
  literal?: unknown
}

const UNKNOWN_FIELD = /^(.*?): unknown field "((?:[^"\\]|\\.)*)"$/

/**
 * A validation problem with what the unknown field it names most likely meant, if anything is
 * close enough; any other problem as it was.
 *
 * @param problem - one problem of a `RuleConfigError`, `<path>: <message>`
 * @param document - the document as written (parsed JSON)
 */
export function withHint(problem: string, document: unknown): string {
  const found = UNKNOWN_FIELD.exec(problem)
  if (!found) return problem
  const [, path = '', quoted = ''] = found
  const hint = fieldHint(pathSegments(path), JSON.parse(`"${quoted}"`) as string, document)
  return hint === undefined ? problem : `${problem}: ${hint}`
}

/**
 * The hint for `name`, unknown in the object at `path`: an exact field one level up or down
 * first, then the closest spelling here, then the closest one level down.
 */
function fieldHint(path: (string | number)[], name: string, document: unknown): string | undefined {
  const chain = objectsAlong(path, document)
  const here = chain.at(-1)
  if (!here) return undefined
  const below = Object.entries(here.fields)
    .map(([field, schema]) => ({ field, fields: objectFields(schema, undefined) }))
    .filter((child): child is { field: string; fields: Record<string, SchemaNode> } =>
      Boolean(child.fields)
    )
  const under = below.find((child) => name in child.fields)
  if (under) return `it belongs under "${under.field}"`
  const parent = chain.at(-2)
  const holder = path.findLast((segment) => typeof segment === 'string')
  if (parent && holder !== undefined && name in parent.fields)
    return `it belongs beside "${holder}"`
  const close = closest(name, Object.keys(here.fields))
  if (close !== undefined) return `did you mean "${close}"?`
  for (const child of below) {
    const match = closest(name, Object.keys(child.fields))
    if (match !== undefined) return `did you mean "${match}", under "${child.field}"?`
  }
  return undefined
}

/** `rules[0].match` as `['rules', 0, 'match']`; `(document)` as none. */
function pathSegments(path: string): (string | number)[] {
  if (path === '(document)') return []
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map(([, key, index]) =>
    index === undefined ? key! : Number(index)
  )
}

/** The fields of every object from the document down to the one at `path`, outermost first. */
function objectsAlong(
  path: readonly (string | number)[],
  document: unknown
): { fields: Record<string, SchemaNode> }[] {
  const chain: { fields: Record<string, SchemaNode> }[] = []
  let schema: SchemaNode | undefined = RulesDocumentSchema as unknown as SchemaNode
  let value = document
  for (let i = 0; ; i++) {
    const fields = objectFields(schema, value)
    if (fields) chain.push({ fields })
    if (i === path.length || !schema) break
    const segment = path[i]!
    schema = childOf(schema, segment, value)
    value = (value as Record<string | number, unknown> | undefined)?.[segment]
  }
  // The object at `path` must be the last one read; otherwise the path went past the schema.
  return objectFields(schema, value) ? chain : []
}

/** The schema inside optional and nullable wrappers. */
function unwrapped(schema: SchemaNode | undefined): SchemaNode | undefined {
  let node = schema
  while (node?.wrapped) node = node.wrapped
  return node
}

/**
 * The fields of the object `schema` validates, if it is one: of a variant, those of the option
 * the value's discriminator picks, or of every option when none does.
 */
function objectFields(
  schema: SchemaNode | undefined,
  value: unknown
): Record<string, SchemaNode> | undefined {
  const node = unwrapped(schema)
  if (node?.entries) return node.entries
  if (node?.type === 'variant' && typeof node.key === 'string' && node.options) {
    const discriminator = (value as Record<string, unknown> | undefined)?.[node.key]
    const picked = node.options.find(
      (option) => unwrapped(option.entries?.[node.key as string])?.literal === discriminator
    )
    if (picked?.entries) return picked.entries
    return Object.assign({}, ...node.options.map((option) => option.entries ?? {})) as Record<
      string,
      SchemaNode
    >
  }
  if (node?.type === 'union') {
    for (const option of node.options ?? []) {
      const fields = objectFields(option, value)
      if (fields) return fields
    }
  }
  return undefined
}

/** The schema of `segment` inside `schema`: a field, an array's item, a record's value. */
function childOf(
  schema: SchemaNode,
  segment: string | number,
  value: unknown
): SchemaNode | undefined {
  const node = unwrapped(schema)
  if (typeof segment === 'number') return node?.item
  return objectFields(node, value)?.[segment] ?? node?.value
}

/**
 * The known name closest to `name`: the same but for case, or at most two edits away (and
 * fewer than half its letters), the nearest first.
 */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.min(2, Math.ceil(name.length / 2) - 1)
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (distance <= bestDistance && (best === undefined || distance < bestDistance)) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/**
 * Edits between two words: insertions, deletions, substitutions and swaps of two neighbouring
 * letters (the optimal string alignment distance).
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(
        rows[i - 1]![j]! + 1,
        rows[i]![j - 1]! + 1,
        rows[i - 1]![j - 1]! + substitution
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = d
    }
  }
  return rows[a.length]![b.length]!
}
