import { describe, expect, it } from 'vitest'
import bundled from '../../rules.json'
import { codeBlocks } from '../../tools/docs/markdown'

/**
 * docs/operations.md (Failure) advises `failMode: "closed"` for rules that guard against abuse,
 * such as logins: a limiter that cannot decide should not open the door to password guessing.
 * Every rule the project shows follows it: the bundled rules.json, examples/, and every rules
 * block of the README and the docs.
 */
const pages = import.meta.glob<string>(['../../README.md', '../../docs/**/*.md'], {
  query: '?raw',
  import: 'default',
  eager: true,
})
const examples = import.meta.glob<unknown>('../../examples/**/*.json', {
  import: 'default',
  eager: true,
})

interface ShownRule {
  where: string
  rule: Record<string, unknown>
}

/** The rules of a JSON value: a rules document's, or a single rule. */
function rulesOf(value: unknown): Record<string, unknown>[] {
  if (typeof value !== 'object' || value === null) return []
  const fields = value as Record<string, unknown>
  if (Array.isArray(fields.rules)) return fields.rules as Record<string, unknown>[]
  return 'id' in fields && 'algorithm' in fields ? [fields] : []
}

/** Every rule the project shows, and where. */
function shownRules(): ShownRule[] {
  const shown: ShownRule[] = rulesOf(bundled).map((rule) => ({ where: 'rules.json', rule }))
  for (const [file, document] of Object.entries(examples))
    shown.push(...rulesOf(document).map((rule) => ({ where: file, rule })))
  for (const [file, text] of Object.entries(pages)) {
    for (const block of codeBlocks(text)) {
      if (block.lang !== 'json') continue
      const where = `${file.replace(/^(\.\.\/)+/, '')}:${block.line}`
      shown.push(...rulesOf(JSON.parse(block.text)).map((rule) => ({ where, rule })))
    }
  }
  return shown
}

/**
 * Whether a rule guards against abuse: it locks a key out (`penalty`), counts failed
 * authentication (`countOn` 401 or 403), or limits a login.
 */
function guardsAgainstAbuse(rule: Record<string, unknown>): boolean {
  const statuses = (rule.countOn as { status?: unknown[] } | undefined)?.status ?? []
  const paths = [(rule.match as { path?: unknown } | undefined)?.path].flat()
  return (
    rule.penalty !== undefined ||
    statuses.some((status) => status === 401 || status === 403) ||
    paths.some((path) => typeof path === 'string' && /log-?in|sign-?in|password/i.test(path))
  )
}

describe('the advice on failMode, followed everywhere', () => {
  const shown = shownRules()

  it('finds the rules it checks: the bundled login rule and the docs', () => {
    const guards = shown.filter(({ rule }) => guardsAgainstAbuse(rule))
    expect(guards.map(({ where }) => where)).toEqual(
      expect.arrayContaining([
        'rules.json',
        expect.stringMatching(/^docs\/configuration\.md:/),
        expect.stringMatching(/^docs\/policies\.md:/),
      ])
    )
  })

  it('every rule that guards against abuse fails closed', () => {
    const open = shown
      .filter(({ rule }) => guardsAgainstAbuse(rule) && rule.failMode !== 'closed')
      .map(({ where, rule }) => `${where}: ${String(rule.id)}`)
    expect(open).toEqual([])
  })
})
