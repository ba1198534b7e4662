/**
 * @module rules/envoy/request
 * envoyproxy/ratelimit's `RateLimitRequest` in proto3 JSON: field names in lowerCamel or
 * snake_case, unknown fields rejected, 32- and 64-bit integers as numbers or decimal strings.
 */
import { BadRequestError } from '../../errors'
import { JSON_BOUNDS, jsonBoundsProblem } from '../json-bounds'
import type { EnvoyEntry } from './limits'
import type { Raw } from './types'
import { parseUnit, UNIT_NUMBERS, type EnvoyUnit, MAX_UINT32 } from './units'

/** One descriptor of a request. */
export interface EnvoyDescriptor {
  entries: EnvoyEntry[]
  /** A limit the request sets for this descriptor. */
  override?: { requestsPerUnit: number; unit: EnvoyUnit }
  /** Units to add (0 only looks), after the request-level default is applied. */
  hits: number
}

/** A parsed request. */
export interface EnvoyRequest {
  domain: string
  descriptors: EnvoyDescriptor[]
}

/**
 * Parses a `RateLimitRequest`.
 *
 * @param input - the parsed JSON body
 * @throws {BadRequestError} naming the first field that is wrong, or where the body nests
 *   deeper or holds more than `JSON_BOUNDS` allows
 */
export function parseEnvoyRequest(input: unknown): EnvoyRequest {
  const tooBig = jsonBoundsProblem(input, JSON_BOUNDS, 'request')
  if (tooBig) fail('request', tooBig)
  const request = fields(input, 'request', ['domain', 'descriptors', 'hits_addend'])
  const domain = text(request.domain ?? '', 'domain')
  if (domain === '') fail('domain', 'rate limit domain must not be empty')
  const list = request.descriptors ?? []
  if (!Array.isArray(list)) fail('descriptors', 'descriptors must be a list')
  if (list.length === 0) fail('descriptors', 'rate limit descriptor list must not be empty')
  // A request-level hits_addend of 0 (the proto default) means 1, as envoyproxy/ratelimit reads it.
  const requestHits = Math.max(1, integer(request.hits_addend ?? 0, 'hits_addend', MAX_UINT32))
  const descriptors = list.map((raw: unknown, i) => {
    const at = `descriptors[${i}]`
    const d = fields(raw, at, ['entries', 'limit', 'hits_addend'])
    const entries = (
      Array.isArray(d.entries) ? d.entries : fail(`${at}.entries`, 'entries must be a list')
    ).map((e: unknown, j) => {
      const entry = fields(e, `${at}.entries[${j}]`, ['key', 'value'])
      return {
        key: text(entry.key ?? '', `${at}.entries[${j}].key`),
        value: text(entry.value ?? '', `${at}.entries[${j}].value`),
      }
    })
    const descriptor: EnvoyDescriptor = {
      entries,
      hits:
        d.hits_addend === undefined || d.hits_addend === null
          ? requestHits
          : integer(d.hits_addend, `${at}.hits_addend`, Number.MAX_SAFE_INTEGER),
    }
    if (d.limit !== undefined && d.limit !== null) {
      const limit = fields(d.limit, `${at}.limit`, ['requests_per_unit', 'unit'])
      const unit = typeof limit.unit === 'number' ? UNIT_NUMBERS[limit.unit] : parseUnit(limit.unit)
      if (!unit || (typeof limit.unit === 'string' && limit.unit !== unit))
        fail(`${at}.limit.unit`, `unknown unit ${JSON.stringify(limit.unit)}`)
      descriptor.override = {
        requestsPerUnit: integer(
          limit.requests_per_unit ?? 0,
          `${at}.limit.requests_per_unit`,
          MAX_UINT32
        ),
        unit,
      }
    }
    return descriptor
  })
  return { domain, descriptors }
}

/** The object's fields under snake_case names; each may be written in lowerCamel instead. */
function fields(input: unknown, at: string, names: readonly string[]): Raw {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    fail(at, `${at} must be an object`)
  const out: Raw = {}
  for (const [key, value] of Object.entries(input as Raw)) {
    const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
    if (!names.includes(snake)) fail(`${at}.${key}`, `unknown field ${JSON.stringify(key)}`)
    if (snake in out) fail(`${at}.${key}`, `field ${JSON.stringify(snake)} is given twice`)
    out[snake] = value
  }
  return out
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string') fail(at, `${at} must be a string`)
  return value as string
}

function integer(value: unknown, at: string, max: number): number {
  const n = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max)
    fail(at, `${at} must be a whole number from 0 to ${max}`)
  return n as number
}

function fail(field: string, message: string): never {
  throw new BadRequestError(field, message)
}
