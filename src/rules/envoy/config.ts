/**
 * @module rules/envoy/config
 * envoyproxy/ratelimit configurations (domain + nested descriptors), validated as that service
 * validates them and compiled into lookup trees. Messages carry Envoy's wording plus where the
 * bad descriptor is, e.g. `descriptors[1].descriptors[0] (messaging.to_number): invalid rate
 * limit unit 'fortnight'`.
 */
import { compileGlob } from '../glob'
import { loadLimit } from './limit-block'
import type { EnvoyNode, Raw } from './types'

/** Keys envoyproxy/ratelimit accepts, plus our `algorithm` extension inside `rate_limit`. */
const VALID_KEYS = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'quota_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'metadata',
  'algorithm',
])

/** Where a config came from, for messages: a file (`envoy.yaml: descriptors[0] …`) or a path. */
export type EnvoyOrigin = { file: string } | { path: string }

/**
 * Validates and compiles configurations.
 *
 * @param configs - parsed YAML or JSON documents, each `{ domain, descriptors }`
 * @param originOf - where the i-th config came from: a file, or a path such as `domains[0]`
 * @returns the domains, and every problem found (use the domains only if there are none)
 */
export function compileEnvoy(
  configs: readonly unknown[],
  originOf: (index: number) => EnvoyOrigin
): { domains: Map<string, EnvoyNode>; problems: string[] } {
  const domains = new Map<string, EnvoyNode>()
  const problems: string[] = []
  configs.forEach((config, index) => {
    const origin = originOf(index)
    const report = (at: string, message: string) =>
      problems.push(
        'file' in origin
          ? `${origin.file}: ${at === '' ? '' : `${at}: `}${message}`
          : `${origin.path}${at === '' ? '' : `.${at}`}: ${message}`
      )
    if (!isMap(config))
      return report('', 'config error, the config must be a map with "domain" and "descriptors"')
    const before = problems.length
    checkKeys(config, '', report)
    if (problems.length > before) return
    const domain = config.domain
    if (typeof domain !== 'string' || domain === '')
      return report('', 'config file cannot have empty domain')
    if (domains.has(domain)) return report('', `duplicate domain '${domain}' in config file`)
    const root = newNode()
    loadDescriptors(root, config.descriptors, '', `${domain}.`, report)
    domains.set(domain, root)
  })
  return { domains, problems }
}

function loadDescriptors(
  parent: EnvoyNode,
  list: unknown,
  at: string,
  parentKey: string,
  report: (at: string, message: string) => void
): void {
  if (list === undefined || list === null) return
  if (!Array.isArray(list))
    return report(
      `${at}.descriptors`.replace(/^\./, ''),
      'error loading config file: descriptors must be a list'
    )
  list.forEach((raw: Raw, index) => {
    const here = `${at}.descriptors[${index}]`.replace(/^\./, '')
    // envoyproxy/ratelimit's YAML reader keeps any scalar as text: `value: 2061234567` is a string.
    const key = scalarText(raw.key)
    const value = scalarText(raw.value ?? '')
    if (typeof key !== 'string' || key === '') return report(here, 'descriptor has empty key')
    if (typeof value !== 'string')
      return report(here, `error loading config file: value of '${key}' must be a string`)
    const finalKey = value === '' ? key : `${key}_${value}`
    const composite = `${parentKey}${finalKey}`
    const named = `${here} (${composite})`
    if (parent.children.has(finalKey))
      return report(named, `duplicate descriptor composite key '${composite}'`)
    const node = newNode()
    if (raw.rate_limit !== undefined && raw.rate_limit !== null) {
      const limit = loadLimit(raw.rate_limit as Raw, raw, (message) => report(named, message))
      if (limit) node.limit = limit
    }
    for (const flag of [
      'shadow_mode',
      'quota_mode',
      'share_threshold',
      'detailed_metric',
      'value_to_metric',
    ]) {
      if (raw[flag] !== undefined && typeof raw[flag] !== 'boolean')
        report(named, `error loading config file: ${flag} must be true or false`)
    }
    if (raw.share_threshold === true) {
      if (!finalKey.includes('*')) {
        report(
          named,
          `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`
        )
      } else {
        node.shareThreshold = true
        node.wildcardPattern = finalKey
      }
    }
    if (finalKey.includes('*'))
      parent.wildcards.push({ key: finalKey, glob: compileGlob(finalKey) })
    loadDescriptors(node, raw.descriptors, here, `${composite}.`, report)
    parent.children.set(finalKey, node)
  })
}

/** envoyproxy/ratelimit's key check: only known keys, and lists hold maps. */
function checkKeys(map: Raw, at: string, report: (at: string, message: string) => void): void {
  for (const [key, value] of Object.entries(map)) {
    if (!VALID_KEYS.has(key)) {
      report(at, `config error, unknown key '${key}'`)
      continue
    }
    if (key === 'metadata') continue
    if (Array.isArray(value)) {
      value.forEach((element, index) => {
        const here = `${at}.${key}[${index}]`.replace(/^\./, '')
        if (!isMap(element))
          report(
            here,
            `config error, yaml file contains list of type other than map: ${JSON.stringify(element)}`
          )
        else checkKeys(element, here, report)
      })
    } else if (isMap(value)) {
      checkKeys(value, `${at}.${key}`.replace(/^\./, ''), report)
    }
  }
}

function scalarText(value: unknown): unknown {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value
}

function newNode(): EnvoyNode {
  return { children: new Map(), wildcards: [], shareThreshold: false }
}

function isMap(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
