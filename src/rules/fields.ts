/**
 * @module rules/fields
 * Headers and query parameters as rules read them: under every spelling that common servers
 * fold into the same name, so a client cannot send a keyed value under an alias the limiter
 * overlooks while the origin still reads it.
 */
import { BadRequestError } from '../errors'
import type { RequestFacts } from '../types'

/** A header or query parameter a rule reads, with its folded name computed once. */
export interface Field {
  kind: 'header' | 'query'
  /** The name as configured (a header name lower-cased). */
  name: string
  /** The name every alias folds to. */
  folded: string
  /** Whether the name has aliases at all (else one lookup reads every spelling). */
  aliased: boolean
}

/**
 * CGI and WSGI pass `X-Api-Key` and `X_Api_Key` alike as `HTTP_X_API_KEY`, and Apache 2.2 and
 * lighttpd turn every character of a name but letters and digits into `_` (`X.Api~Key` too):
 * header names fold case, and every other character to `-`.
 */
export function foldHeaderName(name: string): string {
  // Most names a request carries (`accept`, `user-agent`) fold to themselves: no new string.
  return FOLDED.test(name) ? name : name.toLowerCase().replace(NOT_ALPHANUMERIC, '-')
}

const FOLDED = /^[a-z0-9-]*$/
const NOT_ALPHANUMERIC = /[^a-z0-9]/g

/**
 * PHP reads `api.key`, `api key` (also `api+key`, as `+` decodes to a space) and `api[key` as
 * `api_key`, and drops leading spaces; PHP, Rails and Node's `qs` read `api_key[…]` as
 * `api_key` itself (an array or an object); ASP.NET ignores the case of names.
 */
export function foldQueryName(name: string): string {
  const bracket = name.indexOf('[')
  const base = bracket > 0 && name.includes(']', bracket) ? name.slice(0, bracket) : name
  return base.trimStart().replace(/[ .[]/g, '_').toLowerCase()
}

/**
 * Compiles a header or query parameter name.
 *
 * @param kind - `header` or `query`
 * @param name - the configured name
 */
export function compileField(kind: 'header' | 'query', name: string): Field {
  if (kind === 'header') {
    const lower = name.toLowerCase()
    return { kind, name: lower, folded: foldHeaderName(lower), aliased: /[^a-z0-9]/.test(lower) }
  }
  return { kind, name, folded: foldQueryName(name), aliased: true }
}

/** Each folded name's spellings and their values. */
type Index = Map<string, [string, string][]>

/**
 * Per request, built on first use (an incoming request's headers are immutable, and its query is
 * parsed once into the facts): each folded name's spellings and their values; for headers whose
 * names all fold to themselves, as nearly every request's do, only the set of those names (a
 * name's one spelling is then the folded name itself, if the request carries it), which saves a
 * map and an array per header on every request.
 */
const headerIndexes = new WeakMap<Headers, Set<string> | Index>()
const queryIndexes = new WeakMap<URLSearchParams, Index>()

function headerIndexOf(headers: Headers): Set<string> | Index {
  let index = headerIndexes.get(headers)
  if (index === undefined) {
    const names = new Set<string>()
    let folded = true
    headers.forEach((_value: string, name: string) => {
      names.add(name)
      folded &&= FOLDED.test(name)
    })
    index = folded ? names : buildIndex(headers, foldHeaderName)
    headerIndexes.set(headers, index)
  }
  return index
}

function queryIndexOf(query: URLSearchParams): Index {
  let index = queryIndexes.get(query)
  if (index === undefined) {
    index = buildIndex(query, foldQueryName)
    queryIndexes.set(query, index)
  }
  return index
}

/** Names the code asks spellings of, folded once (a handful of constants). */
const foldedNames = new Map<string, string>()

function foldedName(name: string): string {
  let folded = foldedNames.get(name)
  if (folded === undefined) {
    folded = foldHeaderName(name)
    if (foldedNames.size < 64) foldedNames.set(name, folded)
  }
  return folded
}

function buildIndex(entries: Headers | URLSearchParams, fold: (name: string) => string): Index {
  const index: Index = new Map()
  entries.forEach((value: string, name: string) => {
    const folded = fold(name)
    const spellings = index.get(folded)
    if (spellings) spellings.push([name, value])
    else index.set(folded, [[name, value]])
  })
  return index
}

/**
 * The names under which a request carries a header, as common servers would read it: every
 * spelling that folds as `name` does (see {@link foldHeaderName}), lower-cased.
 *
 * @param headers - the request's headers (an incoming request's: they cannot change)
 * @param name - the header, spelled any way
 */
export function headerSpellings(headers: Headers, name: string): string[] {
  const folded = foldedName(name)
  const index = headerIndexOf(headers)
  if (index instanceof Set) return index.has(folded) ? [folded] : []
  const spellings = index.get(folded)
  return spellings === undefined ? [] : spellings.map(([spelling]) => spelling)
}

/**
 * The value a request carries for a header or query parameter, under any of its spellings.
 *
 * A header's value is its first one: a repeated header arrives joined with ", ", and keying on
 * the whole string would let a client mint a new key per request (`x-api-key: REAL` plus
 * `x-api-key: junk1`, …) while an origin that reads the first value still sees REAL. Two
 * spellings (`x-api-key`, `x_api_key`) with different values are refused: the origin may read
 * either. A query parameter must appear once under all its spellings together: servers
 * disagree on which of several values counts (first, last, all).
 *
 * @param field - the compiled field
 * @param facts - the request
 * @param whole - take a header's whole value, not its first item (a cost must be one number)
 * @returns the value, or `undefined` when the request does not carry it
 * @throws {BadRequestError} when the request carries it ambiguously
 */
export function fieldValue(field: Field, facts: RequestFacts, whole = false): string | undefined {
  if (field.kind === 'header') {
    const pick = whole ? (value: string) => value : firstValue
    if (!field.aliased) {
      const value = facts.headers.get(field.name)
      return value === null ? undefined : pick(value)
    }
    const index = headerIndexOf(facts.headers)
    if (index instanceof Set) {
      if (!index.has(field.folded)) return undefined
      return pick(facts.headers.get(field.folded)!)
    }
    const spellings = index.get(field.folded)
    if (spellings === undefined) return undefined
    const values = new Set(spellings.map(([, value]) => pick(value)))
    if (values.size > 1) {
      const names = spellings.map(([name]) => JSON.stringify(name)).join(', ')
      throw new BadRequestError(
        `header:${field.name}`,
        `The headers ${names} are read as one by common servers but carry different values; a rate-limit key needs exactly one value.`
      )
    }
    return pick(spellings[0]![1])
  }
  const spellings = queryIndexOf(facts.query).get(field.folded)
  if (spellings === undefined) return undefined
  if (spellings.length > 1) {
    const names = [...new Set(spellings.map(([name]) => JSON.stringify(name)))]
    const as =
      names.length === 1 && names[0] === JSON.stringify(field.name)
        ? ''
        : ` (as ${names.join(', ')})`
    throw new BadRequestError(
      `query:${field.name}`,
      `The query parameter ${JSON.stringify(field.name)} appears ${spellings.length} times${as}; a rate-limit key needs exactly one value.`
    )
  }
  return spellings[0]![1]
}

function firstValue(value: string): string {
  const comma = value.indexOf(',')
  return comma === -1 ? value : value.slice(0, comma).trim()
}
