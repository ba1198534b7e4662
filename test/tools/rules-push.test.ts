import { describe, expect, it } from 'vitest'
import { listArgs, listedRevisions, putArgs } from '../../tools/rules-push'

const remote = { local: false }

describe('rules push', () => {
  it('writes rules and rules:last-good with the same revision and metadata', () => {
    const { revision, commands } = putArgs('r.json', remote, 1_000, [])
    expect(revision).toBe(1_000)
    const metadata = JSON.stringify({ revision: 1_000, updatedAt: new Date(1_000).toISOString() })
    expect(commands).toEqual(
      ['rules', 'rules:last-good'].map((key) => [
        'kv',
        'key',
        'put',
        key,
        '--path',
        'r.json',
        '--metadata',
        metadata,
        '--binding',
        'RULES',
        '--remote',
      ])
    )
  })

  it('stamps a revision above every listed one, even with a clock behind', () => {
    const listed = listedRevisions(`[
      { "name": "rules", "metadata": { "revision": 5000, "updatedAt": "x" } },
      { "name": "rules:last-good", "metadata": { "revision": 7000 } },
      { "name": "rules-other", "metadata": { "revision": 9000 } },
      { "name": "rules:hand" }
    ]`)
    expect(listed).toEqual([5000, 7000])
    expect(putArgs('r.json', remote, 1_000, listed).revision).toBe(7001)
    expect(putArgs('r.json', remote, 8_000, listed).revision).toBe(8000)
  })

  it('reads nothing from output it cannot parse', () => {
    expect(listedRevisions('wrangler is sad')).toEqual([])
    expect(listedRevisions('{"not":"a list"}')).toEqual([])
  })

  it('asks wrangler for local storage only with --local', () => {
    expect(listArgs({ local: true, persistTo: '.state', env: 'staging' })).toEqual([
      'kv',
      'key',
      'list',
      '--prefix',
      'rules',
      '--binding',
      'RULES',
      '--local',
      '--persist-to',
      '.state',
      '--env',
      'staging',
    ])
    expect(listArgs(remote)).toContain('--remote')
  })
})
