/**
 * @module rules/parse
 * Validates a rules document once and compiles it (rules in `compile.ts`, Envoy domains in
 * `envoy/`) into the frozen `RuleSet` every request reads.
 */
import * as v from 'valibot'
import { RuleConfigError } from '../errors'
import { compileRule } from './compile'
import { crossCheck } from './cross-check'
import type { CheckedRule } from './document'
import { compileEnvoy } from './envoy'
import { jsonBoundsProblem } from './json-bounds'
import { compileList } from './lists'
import { issuesBesidesAlgorithm, RulesDocumentSchema, RuleSchema, show } from './schema'
import type { RuleSet } from './types'

/**
 * Validates and compiles a rules document.
 *
 * @param input - the parsed JSON
 * @param source - where it came from, prefixed to error messages
 * @returns the compiled rule set
 * @throws {RuleConfigError} listing every problem of the document, found in one pass, each with
 *   the path of the bad field, e.g. `rules[1].period: "1x" is not a duration …`; or the one place
 *   where the document goes past `JSON_BOUNDS` (nested more than 32 levels, more than 100,000
 *   values)
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
  const written = input as Record<string, unknown>
  const result = v.safeParse(RulesDocumentSchema, input)
  const problems = result.success ? [] : result.issues.map((issue) => problemOf(issue))
  // The checks between fields and rules run on every rule that passed the schema, so that one
  // pass reports everything: a rule whose algorithm is unknown gets its other fields checked too.
  const writtenRules = Array.isArray(written.rules) ? (written.rules as unknown[]) : []
  const rules: (CheckedRule | undefined)[] = result.success
    ? result.output.rules
    : writtenRules.map((rule, index) => {
        const checked = v.safeParse(RuleSchema, rule)
        if (checked.success) return checked.output
        if (checked.issues.some(isAlgorithmIssue))
          problems.push(...issuesBesidesAlgorithm(rule).map((i) => problemOf(i, `rules[${index}]`)))
        return undefined
      })
  problems.push(...crossCheck(rules, writtenRules.map(idOf)))
  const domains = result.success ? (result.output.domains ?? []) : arrayOr(written.domains)
  const envoy = compileEnvoy(domains, (index) => ({ path: `domains[${index}]` }))
  problems.push(...envoy.problems)
  const hasJwt = written.jwt !== undefined
  rules.forEach((rule, index) => {
    if (rule?.tiers?.from.startsWith('claim:') && !hasJwt)
      problems.push(`rules[${index}].tiers.from: a claim needs the document's "jwt" settings`)
    rule?.key.forEach((part, i) => {
      if (part.startsWith('claim:') && !hasJwt)
        problems.push(`rules[${index}].key[${i}]: a claim needs the document's "jwt" settings`)
    })
  })
  if (!result.success || problems.length > 0)
    throw new RuleConfigError(source, inDocumentOrder(problems))
  const document = result.output
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

/** Whether an issue is the schema failing to pick a rule's variant by its `algorithm`. */
function isAlgorithmIssue(issue: v.BaseIssue<unknown>): boolean {
  const path = issue.path ?? []
  return path.length === 1 && (path[0] as { key: unknown }).key === 'algorithm'
}

function idOf(rule: unknown): unknown {
  return typeof rule === 'object' && rule !== null ? (rule as { id?: unknown }).id : undefined
}

function arrayOr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

/**
 * The problems ordered by the rule they are in (the document's own fields first), each rule's
 * in the order they were found.
 */
function inDocumentOrder(problems: string[]): string[] {
  const ruleOf = (problem: string) => Number(/^rules\[(\d+)\]/.exec(problem)?.[1] ?? -1)
  return problems
    .map((problem, order) => ({ problem, order, rule: ruleOf(problem) }))
    .sort((a, b) => a.rule - b.rule || a.order - b.order)
    .map(({ problem }) => problem)
}

function problemOf(issue: v.BaseIssue<unknown>, prefix = ''): string {
  let path = prefix
  // An unknown field is a problem of the object that holds it, so the path stops there.
  const items = issue.expected === 'never' ? (issue.path ?? []).slice(0, -1) : (issue.path ?? [])
  for (const item of items) {
    const key = (item as { key: unknown }).key
    path += typeof key === 'number' ? `[${key}]` : path === '' ? String(key) : `.${String(key)}`
  }
  return `${path === '' ? '(document)' : path}: ${issue.message}`
}
