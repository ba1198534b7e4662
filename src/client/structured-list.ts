/**
 * @module client/structured-list
 * A dependency-free parser for RFC 9651 structured-field lists (the `RateLimit` header of
 * draft-ietf-httpapi-ratelimit-headers-11 is one). It follows the RFC's parsing algorithms
 * (section 4.2) to the letter: any deviation fails the whole field, as the RFC requires, and
 * a failure is `undefined`, never an exception.
 */

/** A bare item (RFC 9651 section 3.3), tagged with its type. */
export type BareItem =
  | { type: 'integer' | 'decimal' | 'date'; value: number }
  | { type: 'string' | 'token' | 'bytes' | 'display'; value: string }
  | { type: 'boolean'; value: boolean }

/** An item with its parameters (last of a repeated key wins, as the RFC says). */
export interface Item {
  value: BareItem
  params: Map<string, BareItem>
}

/** A list member: an item, or an inner list with its parameters. */
export type Member = Item | { inner: Item[]; params: Map<string, BareItem> }

const DIGIT = /[0-9]/
const ALPHA = /[A-Za-z]/
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/
const KEY_START = /[a-z*]/
const KEY_CHAR = /[a-z0-9_\-.*]/
const BASE64 = /^[A-Za-z0-9+/]*$/
const LOWER_HEX = /^[0-9a-f]{2}$/

/** Thrown inside the parser only; {@link parseList} turns it into `undefined`. */
class Malformed extends Error {}

/**
 * Parses a structured-field list.
 *
 * @param field - the field value (several lines of it joined with `, `, as `Headers.get` does)
 * @returns the members, or `undefined` when the field is not a valid list
 */
export function parseList(field: string): Member[] | undefined {
  try {
    return new Parser(field).list()
  } catch (error) {
    if (error instanceof Malformed) return undefined
    throw error
  }
}

/**
 * Whether base64 decodes, as WHATWG's forgiving-base64 (and so `atob`) does: padding may be
 * left out, as RFC 9651 asks parsers to accept, but a length no bytes could have is refused.
 */
function isBase64(text: string): boolean {
  const data = text.length % 4 === 0 ? text.replace(/={1,2}$/, '') : text
  return data.length % 4 !== 1 && BASE64.test(data)
}

class Parser {
  #input: string
  #at = 0

  constructor(input: string) {
    this.#input = input
  }

  list(): Member[] {
    const members: Member[] = []
    this.#skip(' ')
    while (!this.#done()) {
      members.push(this.#peek() === '(' ? this.#innerList() : this.#item())
      this.#skip(' \t')
      if (this.#done()) return members
      if (this.#next() !== ',') throw new Malformed()
      this.#skip(' \t')
      // A trailing comma is an error, not an empty member.
      if (this.#done()) throw new Malformed()
    }
    return members
  }

  #innerList(): Member {
    this.#at++
    const inner: Item[] = []
    for (;;) {
      this.#skip(' ')
      if (this.#done()) throw new Malformed()
      if (this.#peek() === ')') {
        this.#at++
        return { inner, params: this.#params() }
      }
      inner.push(this.#item())
      const after = this.#peek()
      if (after !== ' ' && after !== ')') throw new Malformed()
    }
  }

  #item(): Item {
    return { value: this.#bareItem(), params: this.#params() }
  }

  #params(): Map<string, BareItem> {
    const params = new Map<string, BareItem>()
    while (this.#peek() === ';') {
      this.#at++
      this.#skip(' ')
      const key = this.#key()
      let value: BareItem = { type: 'boolean', value: true }
      if (this.#peek() === '=') {
        this.#at++
        value = this.#bareItem()
      }
      params.set(key, value)
    }
    return params
  }

  #key(): string {
    const start = this.#at
    if (!KEY_START.test(this.#peek())) throw new Malformed()
    while (KEY_CHAR.test(this.#peek())) this.#at++
    return this.#input.slice(start, this.#at)
  }

  #bareItem(): BareItem {
    const c = this.#peek()
    if (c === '-' || DIGIT.test(c)) return this.#number()
    if (c === '"') return { type: 'string', value: this.#string() }
    if (c === '*' || ALPHA.test(c)) return { type: 'token', value: this.#token() }
    if (c === ':') return { type: 'bytes', value: this.#bytes() }
    if (c === '?') return { type: 'boolean', value: this.#boolean() }
    if (c === '@') {
      this.#at++
      const date = this.#number()
      if (date.type !== 'integer') throw new Malformed()
      return { type: 'date', value: date.value }
    }
    if (c === '%') return { type: 'display', value: this.#displayString() }
    throw new Malformed()
  }

  #number(): BareItem {
    let sign = 1
    if (this.#peek() === '-') {
      this.#at++
      sign = -1
    }
    if (!DIGIT.test(this.#peek())) throw new Malformed()
    let digits = ''
    let decimal = false
    for (;;) {
      const c = this.#peek()
      if (DIGIT.test(c)) digits += c
      else if (c === '.' && !decimal) {
        if (digits.length > 12) throw new Malformed()
        digits += c
        decimal = true
      } else break
      this.#at++
      if (digits.length > (decimal ? 16 : 15)) throw new Malformed()
    }
    if (!decimal) return { type: 'integer', value: sign * Number(digits) }
    const fraction = digits.length - digits.indexOf('.') - 1
    if (fraction < 1 || fraction > 3) throw new Malformed()
    return { type: 'decimal', value: sign * Number(digits) }
  }

  #string(): string {
    this.#at++
    let value = ''
    for (;;) {
      if (this.#done()) throw new Malformed()
      const c = this.#next()
      if (c === '\\') {
        const escaped = this.#next()
        if (escaped !== '"' && escaped !== '\\') throw new Malformed()
        value += escaped
      } else if (c === '"') return value
      else if (c < ' ' || c > '~') throw new Malformed()
      else value += c
    }
  }

  #token(): string {
    const start = this.#at
    this.#at++
    while (TCHAR.test(this.#peek())) this.#at++
    return this.#input.slice(start, this.#at)
  }

  #bytes(): string {
    this.#at++
    const end = this.#input.indexOf(':', this.#at)
    if (end < 0) throw new Malformed()
    const content = this.#input.slice(this.#at, end)
    if (!isBase64(content)) throw new Malformed()
    this.#at = end + 1
    return content
  }

  #boolean(): boolean {
    this.#at++
    const c = this.#next()
    if (c === '1') return true
    if (c === '0') return false
    throw new Malformed()
  }

  #displayString(): string {
    this.#at++
    if (this.#next() !== '"') throw new Malformed()
    const bytes: number[] = []
    for (;;) {
      if (this.#done()) throw new Malformed()
      const c = this.#next()
      if (c < ' ' || c > '~') throw new Malformed()
      if (c === '%') {
        const hex = this.#input.slice(this.#at, this.#at + 2)
        if (!LOWER_HEX.test(hex)) throw new Malformed()
        bytes.push(parseInt(hex, 16))
        this.#at += 2
      } else if (c === '"') {
        try {
          return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
            new Uint8Array(bytes)
          )
        } catch {
          throw new Malformed()
        }
      } else bytes.push(c.charCodeAt(0))
    }
  }

  #done(): boolean {
    return this.#at >= this.#input.length
  }

  /** The next character, or `''` at the end (which matches no character class). */
  #peek(): string {
    return this.#input.charAt(this.#at)
  }

  #next(): string {
    return this.#input.charAt(this.#at++)
  }

  #skip(chars: string): void {
    while (!this.#done() && chars.includes(this.#peek())) this.#at++
  }
}
