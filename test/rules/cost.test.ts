import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { BadRequestError } from '../../src/errors'
import { CostSchema, MAX_COST, requestCost, type Cost } from '../../src/rules/cost'
import { compileField } from '../../src/rules/fields'
import { facts, withHeaders } from '../support/facts'

const fromHeader: Cost = { header: compileField('header', 'x-cost'), max: 50, default: 2 }

describe('requestCost', () => {
  it('charges a constant cost whatever the request carries', () => {
    expect(requestCost(3, facts())).toBe(3)
    expect(requestCost(3, withHeaders({ 'x-cost': '40' }))).toBe(3)
  })

  it.each([
    ['1', 1],
    ['7', 7],
    ['50', 50],
    ['007', 7],
  ])('reads a cost header of %j as %i', (value, units) => {
    expect(requestCost(fromHeader, withHeaders({ 'X-Cost': value }))).toBe(units)
  })

  it('charges the default when the header is absent', () => {
    expect(requestCost(fromHeader, facts())).toBe(2)
  })

  it.each(['0', '51', '-1', '2.5', '1e1', '0x10', '7 8', '', 'seven', '9'.repeat(20)])(
    'refuses a cost header of %j, never charging 0 or the default',
    (value) => {
      const error = (() => {
        try {
          return requestCost(fromHeader, withHeaders({ 'x-cost': value }))
        } catch (e) {
          return e
        }
      })()
      expect(error).toBeInstanceOf(BadRequestError)
      expect(error).toMatchObject({
        field: 'header:x-cost',
        message: expect.stringContaining('must be a whole number from 1 to 50'),
      })
    }
  )
})

describe('CostSchema', () => {
  it.each([
    [5, 5],
    [
      { header: 'x-cost', max: 10 },
      { header: 'x-cost', max: 10, default: 1 },
    ],
    [
      { header: 'x-cost', max: 10, default: 3 },
      { header: 'x-cost', max: 10, default: 3 },
    ],
  ])('accepts %j', (input, compiled) => {
    expect(v.parse(CostSchema, input)).toEqual(compiled)
  })

  it.each([-1, 1.5, MAX_COST + 1, '5', { header: 'x-cost' }, { header: 'x-cost', max: 5, min: 1 }])(
    'refuses %j',
    (input) => {
      expect(v.safeParse(CostSchema, input).success).toBe(false)
    }
  )
})
