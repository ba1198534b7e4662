/**
 * @module test/support/envoy
 * Envoy descriptor configurations as the Envoy tests write them.
 */
import { expect } from 'vitest'
import { compileEnvoy, type EnvoyEntry } from '../../src/rules'

/**
 * Compiles one domain's descriptors; fails the test on any problem.
 *
 * @param domain - the domain
 * @param descriptors - its descriptors, as in the YAML
 */
export const compileDomain = (domain: string, descriptors: unknown[]) => {
  const { domains, problems } = compileEnvoy([{ domain, descriptors }], () => ({ path: 'x' }))
  expect(problems).toEqual([])
  return domains
}

/**
 * A descriptor's `rate_limit`, with `extra` fields beside the unit and count.
 *
 * @param requests_per_unit - the count
 * @param unit - the unit, `second` by default
 * @param extra - other fields of `rate_limit`
 */
export const rateLimitOf = (
  requests_per_unit: number,
  unit = 'second',
  extra: Record<string, unknown> = {}
) => ({
  rate_limit: { unit, requests_per_unit, ...extra },
})

/**
 * One entry of a request's descriptor.
 *
 * @param key - its key
 * @param value - its value, empty by default
 */
export const entry = (key: string, value = ''): EnvoyEntry => ({ key, value })
