/**
 * @module rules/parse
 * Validates a rules document once and compiles it (rules in `compile.ts`, Envoy domains in
 * `envoy/`) into the frozen `RuleSet` every request reads.
 */
import * as v from 'valibot'
import { RuleConfigError } from '../errors'
import { compileRule } from './compile'
import { crossCheck } from './cross-check'
import { compileEnvoy } from './envoy'
import { jsonBoundsProblem } from './json-bounds'
import { compileList } from './lists'
import { RulesDocumentSchema, show } from './schema'
import type { RuleSet } from './types'

/**
 * Validates and compiles a rules document.
 *
 * @param input - the parsed JSON
 * @param source - where it came from, prefixed to error messages
 * @returns the compiled rule set
 * @throws {RuleConfigError} listing every problem, each with the path of the bad field,
 *   e.g. `rules[1].period: "1x" is not a duration …`; or the one place where the document
 *   goes past `JSON_BOUNDS` (nested more than 32 levels, more than 100,000 values)
 */
export function parseRules(input: unknown, source: string): RuleSet {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RuleConfigError(source, [
      `(document): expected a rules document object, got ${show(input)}`,
    ])
  }
  // Validation and compiling recurse: a document nested thousands deep must stop here.
  const tooBig = jsonBoundsProblem(input)
  if (tooBig) throw new RuleConfigError(source, [tooBig])
  const result = v.safeParse(RulesDocumentSchema, input)
  if (!result.success) {
    throw new RuleConfigError(
      source,
      result.issues.map((issue) => `${pathOf(issue)}: ${issue.message}`)
    )
  }
  const document = result.output
  const problems = crossCheck(document.rules)
  const envoy = compileEnvoy(document.domains ?? [], (index) => ({ path: `domains[${index}]` }))
  problems.push(...envoy.problems)
  document.rules.forEach((rule, index) => {
    if (rule.tiers?.from.startsWith('claim:') && !document.jwt)
      problems.push(`rules[${index}].tiers.from: a claim needs the document's "jwt" settings`)
    rule.key.forEach((part, i) => {
      if (part.startsWith('claim:') && !document.jwt)
        problems.push(`rules[${index}].key[${i}]: a claim needs the document's "jwt" settings`)
    })
  })
  if (problems.length > 0) throw new RuleConfigError(source, problems)
  const ruleSet: RuleSet = {
    source,
    document: input,
    mode: document.mode,
    shadowHeaders: document.shadowHeaders,
    domains: envoy.domains,
    rules: Object.freeze(document.rules.map((rule) => compileRule(rule, document.jurisdiction))),
  }
  const allow = compileList(document.lists?.allow)
  const deny = compileList(document.lists?.deny)
  if (allow) ruleSet.allow = allow
  if (deny) ruleSet.deny = deny
  if (document.jwt) ruleSet.jwt = Object.freeze(document.jwt)
  if (document.jurisdiction) ruleSet.jurisdiction = document.jurisdiction
  return Object.freeze(ruleSet)
}

/**
 * Parses JSON text, then validates it like {@link parseRules}.
 *
 * @param text - the document as text
 * @param source - where it came from
 * @throws {RuleConfigError} for invalid JSON as well as for invalid rules
 */
export function parseRulesText(text: string, source: string): RuleSet {
  let input: unknown
  try {
    input = JSON.parse(text)
  } catch (error) {
    throw new RuleConfigError(source, [`(document): not valid JSON: ${(error as Error).message}`])
  }
  return parseRules(input, source)
}

function pathOf(issue: v.BaseIssue<unknown>): string {
  let path = ''
  // An unknown field is a problem of the object that holds it, so the path stops there.
  const items = issue.expected === 'never' ? (issue.path ?? []).slice(0, -1) : (issue.path ?? [])
  for (const item of items) {
    const key = (item as { key: unknown }).key
    path += typeof key === 'number' ? `[${key}]` : path === '' ? String(key) : `.${String(key)}`
  }
  return path === '' ? '(document)' : path
}
