import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { describe, expect, it } from 'vitest'
import { clientAddress, requestFacts, UNKNOWN_CLIENT } from '../../../src/http/request/facts'

describe('clientAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::1', '2001:db8:1:2::/64'],
    ['::ffff:198.51.100.9', '198.51.100.9'],
    ['::ffff:c633:6409', '198.51.100.9'],
    ['::1', '::/64'],
  ])('%s is limited as %s', (header, expected) => {
    expect(clientAddress(header)).toBe(expected)
  })

  it('groups two addresses of one /64 and separates neighbouring /64s', () => {
    expect(clientAddress('2001:db8:0:1::a')).toBe(clientAddress('2001:db8:0:1:ffff::b'))
    expect(clientAddress('2001:db8:0:1::a')).not.toBe(clientAddress('2001:db8:0:2::a'))
  })

  it.each([null, '', 'not-an-ip', '1.2.3', '999.1.1.1', '203.0.113.7, 10.0.0.1'])(
    '%j is no address',
    (header) => {
      expect(clientAddress(header)).toBeUndefined()
    }
  )

  it('reads every four-part spelling as ipaddr.js does (the dotted-quad shortcut included)', () => {
    const part = fc.oneof(
      fc.integer({ min: 0, max: 300 }).map(String),
      fc.stringMatching(/^0[0-9]{1,3}$/),
      fc.constantFrom('0x1f', '', '+1', '1e2', '२')
    )
    fc.assert(
      fc.property(fc.array(part, { minLength: 4, maxLength: 4 }), (parts) => {
        const text = parts.join('.')
        const expected = ipaddr.IPv4.isValidFourPartDecimal(text)
          ? ipaddr.IPv4.parse(text).toString()
          : undefined
        expect(clientAddress(text)).toBe(expected)
      }),
      { numRuns: 2000 }
    )
  })
})

describe('requestFacts', () => {
  it('takes the client from CF-Connecting-IP, never X-Forwarded-For', () => {
    const facts = requestFacts(
      new Request('https://API.example.com:8443/%61pi/x?a=1&a=2', {
        method: 'post',
        headers: { 'cf-connecting-ip': '2001:db8::1', 'x-forwarded-for': '198.51.100.1' },
      })
    )
    expect(facts).toMatchObject({
      method: 'POST',
      host: 'api.example.com',
      path: '/api/x',
      ip: '2001:db8::/64',
    })
    expect(facts.query.get('a')).toBe('1')
  })

  it('reads request.cf only when a rule asks for country or asn (the runtime parses it on first access)', () => {
    const real = new Request('https://example.com/a', {
      headers: { 'cf-connecting-ip': '203.0.113.7' },
    })
    let reads = 0
    const request = {
      url: real.url,
      method: real.method,
      headers: real.headers,
      get cf() {
        reads++
        return { country: 'NL', asn: 64500 }
      },
    } as unknown as Request
    const facts = requestFacts(request)
    expect(facts.ip).toBe('203.0.113.7')
    expect(reads).toBe(0)
    expect([facts.country, facts.asn, facts.country]).toEqual(['NL', 64500, 'NL'])
    expect(reads).toBe(1)
  })

  it('has no address, country or asn when the request does not carry them', () => {
    const facts = requestFacts(
      new Request('https://example.com/', { headers: { 'x-forwarded-for': '198.51.100.1' } })
    )
    expect(facts.address).toBeUndefined()
    expect(facts.country).toBeUndefined()
    expect(facts.asn).toBeUndefined()
  })

  it.each([null, '', 'not-an-ip', '1.2.3', '203.0.113.7, 10.0.0.1'])(
    'limits a request whose CF-Connecting-IP is %j as the one shared unknown client',
    (header) => {
      const headers = header === null ? undefined : { 'cf-connecting-ip': header }
      const facts = requestFacts(new Request('https://example.com/', { headers }))
      expect(facts.ip).toBe(UNKNOWN_CLIENT)
      expect(facts.address).toBeUndefined()
    }
  )
})
