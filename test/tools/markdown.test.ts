import { describe, expect, it } from 'vitest'
import { anchors, codeBlocks, links, withAbsoluteLinks } from '../../tools/docs/markdown'

// The docs checks and the library-path test read pages through these: a block they miss is a
// block nobody checks.
describe('reading Markdown pages', () => {
  const page = [
    '# Title', //                               1
    '', //                                      2
    '<!-- library-path: file a.json -->', //   3
    '```json', //                               4
    '{ "a": 1 }', //                            5
    '```', //                                   6
    '', //                                      7
    '1. A step, with its block in the list:', // 8
    '', //                                      9
    '   <!-- library-path: run -->', //         10
    '   ```sh', //                              11
    '   npm install', //                        12
    '   ```', //                                13
    '', //                                      14
    '```ts extra words', //                     15
    "const x = '```'", //                       16
    '```', //                                   17
    '', //                                      18
    '    indented code is not a fence', //      19
  ].join('\n')

  it('finds fenced blocks, in lists too, with the comment before each and its line', () => {
    expect(codeBlocks(page)).toEqual([
      { lang: 'json', text: '{ "a": 1 }\n', marker: 'library-path: file a.json', line: 4 },
      { lang: 'sh', text: 'npm install\n', marker: 'library-path: run', line: 11 },
      { lang: 'ts', text: "const x = '```'\n", line: 15 },
    ])
  })

  it("names headings' anchors as GitHub does", () => {
    const headings =
      '# `rules[].period`\n## Metrics and alerts\n## Metrics and alerts\n## The client: `edge-rate-limiter/client`'
    expect([...anchors(headings)]).toEqual([
      'rulesperiod',
      'metrics-and-alerts',
      'metrics-and-alerts-1',
      'the-client-edge-rate-limiterclient',
    ])
  })

  it('finds links and images outside code, with their lines', () => {
    const text = 'See [a](docs/a.md#x).\n\n![chart](c.svg)\n\n`[not](a link)`'
    expect(links(text)).toEqual([
      { href: 'docs/a.md#x', line: 1 },
      { href: 'c.svg', line: 3 },
    ])
  })
})

describe('a page read away from the repository', () => {
  it('has its relative links made absolute, and only those', () => {
    const page = [
      'See [the docs](../docs/a.md#b), [a site](https://example.com/x) and [here](#top).',
      '![chart](chart.svg)',
      '',
      '[ref]: docs/c.md',
      '[away]: http://example.org',
    ].join('\n')
    expect(withAbsoluteLinks(page, (href) => `https://host/${href}`)).toBe(
      [
        'See [the docs](https://host/../docs/a.md#b), [a site](https://example.com/x) and [here](#top).',
        '![chart](https://host/chart.svg)',
        '',
        '[ref]: https://host/docs/c.md',
        '[away]: http://example.org',
      ].join('\n')
    )
  })
})
