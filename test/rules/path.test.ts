import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BadRequestError } from '../../src/errors'
import { requestFacts } from '../../src/http/request/facts'
import { compilePathPattern, limitKey, normalizePath, parseRules, routeOf } from '../../src/rules'
import { matchRules, problems } from '../support/rules'

const rule = (match: Record<string, unknown>, key = ['path']) => ({
  id: 'r',
  match,
  key,
  algorithm: 'sliding-window',
  limit: 1,
  period: '1m',
})
const ruleSet = (match: Record<string, unknown>) =>
  parseRules({ version: 1, rules: [rule(match)] }, 't')

/** The key the rule charges for a request path, or `undefined` if the rule does not match. */
function keyFor(set: ReturnType<typeof ruleSet>, path: string): string | undefined {
  const facts = requestFacts(new Request(`https://example.com${path}`))
  const [matched] = matchRules(set, facts)
  return matched && limitKey(matched, facts)
}

describe('normalizePath', () => {
  it.each([
    ['/login/', '/login'],
    ['/login;jsessionid=1', '/login'],
    ['/login%3b', '/login'],
    ['/login%3Bx=1/', '/login'],
    ['/login%20', '/login'],
    ['/login.', '/login'],
    ['/login.%20.', '/login'],
    ['/api;x/y', '/api/y'],
    ['/%2561pi/x', '/api/x'],
    ['/%25252561pi', '/api'],
    ['/api/..;/admin', '/admin'],
    ['/api/%2e%2e/admin', '/admin'],
    ['/api/%252e%252e/admin', '/admin'],
    ['/a/./b', '/a/b'],
    ['/', '/'],
    ['//', '/'],
    ['/API/Users', '/API/Users'],
    ['/100%25', '/100%'],
    ['/caf%c3%a9', '/caf%C3%A9'],
  ])('%s is %s', (input, expected) => {
    expect(normalizePath(input)).toBe(expected)
  })

  it.each([
    '/login%00',
    '/api%09/x',
    '/a%0a',
    '/a%7F',
    '/a%2500',
    '/a%252509',
    '/a\u0000',
    '/a%2525252561',
  ])('refuses %s', (input) => {
    expect(() => normalizePath(input)).toThrowError(BadRequestError)
  })

  it('leaves plain paths as they are', () => {
    for (const path of ['/api/users/7', '/Api/x_y~z', '/a-b/c:d@e'])
      expect(normalizePath(path)).toBe(path)
  })

  it('drops the format suffix of the last segment only for the route', () => {
    expect(routeOf('/login.json')).toBe('/login')
    expect(routeOf('/a.b/report.tar.gz')).toBe('/a.b/report')
    expect(routeOf('/.env')).toBe('/.env')
    expect(routeOf('/a/b')).toBe('/a/b')
  })

  it('a path pattern with a control character is a rules error', () => {
    expect(problems({ version: 1, rules: [rule({ path: '/a%00' })] })).toEqual([
      'rules[0].match.path: "/a%00" holds a control character (requests with one are refused)',
    ])
  })
})

describe('path patterns', () => {
  it.each([
    ['/login', '/login.json', true],
    ['/login', '/LOGIN', true],
    ['/login', '/login/x', false],
    ['/login.json', '/login', false],
    ['/api/*', '/api', true],
    ['/api/*', '/apix', false],
    ['/*/edit', '/7/edit.html', true],
  ])('%s against the normalised path %s: %s', (pattern, path, expected) => {
    const glob = compilePathPattern(pattern, false)
    const normal = normalizePath(path).toLowerCase()
    expect(glob(normal) || glob(routeOf(normal))).toBe(expected)
  })

  it('keeps case for a rule that says caseSensitive: true, on matching and on the key', () => {
    const strict = ruleSet({ path: '/Login', caseSensitive: true })
    expect(keyFor(strict, '/Login')).toBe('r|%2FLogin')
    expect(keyFor(strict, '/login')).toBeUndefined()
    const folding = ruleSet({ path: '/Login' })
    expect(keyFor(folding, '/LOGIN/')).toBe('r|%2Flogin')
  })
})

/** Tokens that make paths awkward: escapes (some nested), parameters, dots, slashes, case. */
const awkward = fc
  .array(
    fc.constantFrom(
      '/',
      '//',
      '.',
      '..',
      ';',
      'a',
      'B',
      'z',
      '1',
      '-',
      '~',
      '%',
      '%2',
      '%25',
      '%2F',
      '%2f',
      '%5C',
      '%3B',
      '%3b',
      '%20',
      '%2E',
      '%2e',
      '%61',
      '%41',
      '%C3%A9',
      '%e2%82%ac',
      '%3F',
      '*',
      ':'
    ),
    { maxLength: 24 }
  )
  .map((tokens) => `/${tokens.join('')}`)

/** How a segment may be spelled so that origins still read it as the same segment. */
function spell(segment: string, choices: number[], last: boolean): string {
  let out = ''
  for (const [i, char] of [...segment].entries()) {
    const choice = choices[i % choices.length]! % 5
    const hex = `%${char.charCodeAt(0).toString(16)}`
    out += [char, char.toUpperCase(), hex, hex.toUpperCase(), `%25${hex.slice(1)}`][choice]
  }
  const pick = choices[0]! % 7
  if (last && pick === 1) out += '.json'
  if (pick === 2) out += ';jsessionid=1'
  if (pick === 3) out += '%3Bx'
  if (pick === 4) out += '.'
  if (pick === 5) out += '%20'
  return out
}

describe('properties of path normalisation', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          awkward,
          fc.string().map((s) => `/${s}`)
        ),
        (path) => {
          let once: string
          try {
            once = normalizePath(path)
          } catch (error) {
            expect(error).toBeInstanceOf(BadRequestError)
            return
          }
          expect(normalizePath(once)).toBe(once)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it('lands every spelling of one route on one key, matched by the route', () => {
    const segment = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,7}$/)
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.array(fc.constantFrom('/', '//', '/./'), { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        (segments, choices, slashes, trailingSlash) => {
          const route = `/${segments.join('/')}`
          const set = ruleSet({ path: route })
          const spelled =
            segments
              .map(
                (s, i) =>
                  slashes[i]! +
                  spell(
                    s,
                    [...choices.slice(i % choices.length), ...choices],
                    i === segments.length - 1
                  )
              )
              .join('') + (trailingSlash ? '/' : '')
          expect(keyFor(set, spelled)).toBe(`r|${encodeURIComponent(route)}`)
        }
      ),
      { numRuns: 1000 }
    )
  })
})
