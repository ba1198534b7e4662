import { describe, expect, it } from 'vitest'
import { BadRequestError } from '../../../src/errors'
import { parseEnvoyRequest, type EnvoyDescriptor } from '../../../src/rules/envoy/request'
import { MAX_UINT32 } from '../../../src/rules/envoy/units'

const entries = [{ key: 'to_number', value: '2061111111' }]
const one = (descriptor: Record<string, unknown>, request: Record<string, unknown> = {}) =>
  parseEnvoyRequest({ domain: 'messaging', descriptors: [{ entries, ...descriptor }], ...request })
    .descriptors[0]

/** The error `input` is refused with. */
function refusal(input: unknown): BadRequestError {
  try {
    parseEnvoyRequest(input)
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError)
    return error as BadRequestError
  }
  throw new Error('expected the request to be refused')
}

describe('parseEnvoyRequest', () => {
  it('reads a request with its domain and descriptors', () => {
    expect(
      parseEnvoyRequest({
        domain: 'messaging',
        descriptors: [{ entries }, { entries: [{ key: 'message_type', value: 'marketing' }] }],
      })
    ).toEqual({
      domain: 'messaging',
      descriptors: [
        { entries, hits: 1 },
        { entries: [{ key: 'message_type', value: 'marketing' }], hits: 1 },
      ],
    })
  })

  it.each<[string, Record<string, unknown>, Record<string, unknown>, EnvoyDescriptor]>([
    ['no hits_addend: 1', {}, {}, { entries, hits: 1 }],
    ['a request hits_addend of 0 means 1', {}, { hits_addend: 0 }, { entries, hits: 1 }],
    [
      'a request hits_addend applies to every descriptor',
      {},
      { hits_addend: 3 },
      { entries, hits: 3 },
    ],
    ['lowerCamel names', {}, { hitsAddend: 3 }, { entries, hits: 3 }],
    ['a 64-bit integer as a decimal string', {}, { hits_addend: '4' }, { entries, hits: 4 }],
    ['a descriptor hits_addend wins', { hits_addend: 5 }, { hits_addend: 3 }, { entries, hits: 5 }],
    [
      'a descriptor hits_addend of 0 only looks',
      { hitsAddend: 0 },
      { hits_addend: 3 },
      { entries, hits: 0 },
    ],
    [
      'a null descriptor hits_addend is absent',
      { hits_addend: null },
      { hits_addend: 2 },
      { entries, hits: 2 },
    ],
    [
      'a limit override, unit by name',
      { limit: { requests_per_unit: 7, unit: 'HOUR' } },
      {},
      { entries, hits: 1, override: { requestsPerUnit: 7, unit: 'HOUR' } },
    ],
    [
      'a limit override, unit by enum number, in lowerCamel',
      { limit: { requestsPerUnit: '7', unit: 7 } },
      {},
      { entries, hits: 1, override: { requestsPerUnit: 7, unit: 'WEEK' } },
    ],
    [
      'a limit override without requests_per_unit: 0',
      { limit: { unit: 'SECOND' } },
      {},
      { entries, hits: 1, override: { requestsPerUnit: 0, unit: 'SECOND' } },
    ],
    ['a null limit is absent', { limit: null }, {}, { entries, hits: 1 }],
    [
      'an entry without a value: the empty string',
      { entries: [{ key: 'ldap' }] },
      {},
      { entries: [{ key: 'ldap', value: '' }], hits: 1 },
    ],
  ])('%s', (_label, descriptor, request, expected) => {
    expect(one(descriptor, request)).toEqual(expected)
  })

  it.each<[string, unknown, string, string]>([
    ['not an object', [], 'request', 'request must be an object'],
    ['null', null, 'request', 'request must be an object'],
    ['no domain', { descriptors: [{ entries }] }, 'domain', 'rate limit domain must not be empty'],
    [
      'a domain that is not a string',
      { domain: 1, descriptors: [{ entries }] },
      'domain',
      'domain must be a string',
    ],
    [
      'no descriptors',
      { domain: 'd' },
      'descriptors',
      'rate limit descriptor list must not be empty',
    ],
    [
      'descriptors not a list',
      { domain: 'd', descriptors: {} },
      'descriptors',
      'descriptors must be a list',
    ],
    [
      'an unknown field',
      { domain: 'd', descriptors: [{ entries }], extra: 1 },
      'request.extra',
      'unknown field "extra"',
    ],
    [
      'a field given twice',
      { domain: 'd', descriptors: [{ entries }], hits_addend: 1, hitsAddend: 2 },
      'request.hitsAddend',
      'field "hits_addend" is given twice',
    ],
    [
      'a descriptor that is not an object',
      { domain: 'd', descriptors: ['x'] },
      'descriptors[0]',
      'descriptors[0] must be an object',
    ],
    [
      'entries not a list',
      { domain: 'd', descriptors: [{ entries: 'x' }] },
      'descriptors[0].entries',
      'entries must be a list',
    ],
    [
      'no entries',
      { domain: 'd', descriptors: [{}] },
      'descriptors[0].entries',
      'entries must be a list',
    ],
    [
      'an entry key that is not a string',
      { domain: 'd', descriptors: [{ entries: [{ key: 1, value: 'v' }] }] },
      'descriptors[0].entries[0].key',
      'descriptors[0].entries[0].key must be a string',
    ],
    [
      'an unknown entry field',
      { domain: 'd', descriptors: [{ entries: [{ key: 'k', val: 'v' }] }] },
      'descriptors[0].entries[0].val',
      'unknown field "val"',
    ],
    [
      'a negative hits_addend',
      { domain: 'd', descriptors: [{ entries, hits_addend: -1 }] },
      'descriptors[0].hits_addend',
      `descriptors[0].hits_addend must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
    ],
    [
      'a fractional hits_addend',
      { domain: 'd', descriptors: [{ entries }], hits_addend: 1.5 },
      'hits_addend',
      'hits_addend must be a whole number',
    ],
    [
      'a request hits_addend over uint32',
      { domain: 'd', descriptors: [{ entries }], hits_addend: MAX_UINT32 + 1 },
      'hits_addend',
      `hits_addend must be a whole number from 0 to ${MAX_UINT32}`,
    ],
    [
      'a hits_addend string that is not decimal',
      { domain: 'd', descriptors: [{ entries }], hits_addend: '0x10' },
      'hits_addend',
      'must be a whole number',
    ],
    [
      'an unknown unit',
      {
        domain: 'd',
        descriptors: [{ entries, limit: { requests_per_unit: 1, unit: 'FORTNIGHT' } }],
      },
      'descriptors[0].limit.unit',
      'unknown unit "FORTNIGHT"',
    ],
    [
      'a unit name in lower case (proto3 JSON enums are exact)',
      { domain: 'd', descriptors: [{ entries, limit: { requests_per_unit: 1, unit: 'hour' } }] },
      'descriptors[0].limit.unit',
      'unknown unit "hour"',
    ],
    [
      'an unknown unit number',
      { domain: 'd', descriptors: [{ entries, limit: { requests_per_unit: 1, unit: 0 } }] },
      'descriptors[0].limit.unit',
      'unknown unit 0',
    ],
    [
      'requests_per_unit over uint32',
      {
        domain: 'd',
        descriptors: [{ entries, limit: { requests_per_unit: MAX_UINT32 + 1, unit: 'SECOND' } }],
      },
      'descriptors[0].limit.requests_per_unit',
      'must be a whole number',
    ],
  ])('refuses %s, naming the field', (_label, input, field, message) => {
    const error = refusal(input)
    expect(error.field).toBe(field)
    expect(error.message).toContain(message)
  })
})
