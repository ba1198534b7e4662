/**
 * @module tools/docs/markdown
 * The fenced code blocks of a Markdown page, as GitHub reads them (marked's lexer: fences inside
 * list items and quotes too), each with the HTML comment written just before it, if any, and the
 * line it starts on. The docs checks and the library-path test read pages through this.
 */
import { Lexer, type Token, type Tokens } from 'marked'

/** One fenced code block. */
export interface CodeBlock {
  /** The first word of the info string (`json`, `ts`, `sh`), or '' for none. */
  lang: string
  /** The block's content, without the fences. */
  text: string
  /** The text of an HTML comment standing right before the block (`library-path: run`), if any. */
  marker?: string
  /** The 1-based line of the opening fence. */
  line: number
}

/** A Markdown link or image: its target as written, and the line it is on. */
export interface Link {
  href: string
  line: number
}

const COMMENT = /^<!--\s*([\s\S]*?)\s*-->\s*$/

/**
 * Every fenced code block of a page, in order.
 *
 * @param markdown - the page
 */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  // Blocks come in page order; a block in a list item is indented on the page, not in its token.
  const lines = markdown.split('\n')
  let next = 0
  const lineOf = (raw: string) => {
    const fence = raw.split('\n')[0]!.trim()
    const at = lines.findIndex((line, i) => i >= next && line.trim() === fence)
    if (at < 0) return 0
    next = at + raw.split('\n').length
    return at + 1
  }
  const walk = (tokens: readonly Token[]) => {
    tokens.forEach((token, i) => {
      if (token.type === 'code' && (token as Tokens.Code).codeBlockStyle !== 'indented') {
        const code = token as Tokens.Code
        const before = tokens.slice(0, i).findLast((t) => t.type !== 'space')
        const comment = before?.type === 'html' ? COMMENT.exec(before.raw.trim()) : null
        const block: CodeBlock = {
          lang: (code.lang ?? '').split(/\s+/)[0] ?? '',
          text: code.text.endsWith('\n') ? code.text : `${code.text}\n`,
          line: lineOf(code.raw.trimEnd()),
        }
        if (comment?.[1] !== undefined) block.marker = comment[1]
        blocks.push(block)
      }
      const children = childrenOf(token)
      if (children.length > 0) walk(children)
    })
  }
  walk(new Lexer().lex(markdown))
  return blocks
}

/**
 * Every link and image target of a page (inline, not inside code).
 *
 * @param markdown - the page
 */
export function links(markdown: string): Link[] {
  const found: Link[] = []
  const lines = markdown.split('\n')
  const lineOf = (href: string) => lines.findIndex((l) => l.includes(`](${href}`)) + 1
  const walk = (tokens: readonly Token[]) => {
    for (const token of tokens) {
      if (token.type === 'link' || token.type === 'image') {
        const href = (token as Tokens.Link | Tokens.Image).href
        found.push({ href, line: lineOf(href) })
      }
      walk(childrenOf(token))
    }
  }
  walk(new Lexer().lex(markdown))
  return found
}

/**
 * The page with every relative link target made absolute, as a page read away from the
 * repository needs (the package's README on the registry): inline links and images, and
 * reference definitions; targets with a scheme and in-page anchors are left alone. Read as text,
 * code blocks too: a page to rewrite keeps `](` out of its code.
 *
 * @param markdown - the page
 * @param absolute - the absolute URL of a relative target (`docs/a.md#b`), as written
 */
export function withAbsoluteLinks(markdown: string, absolute: (href: string) => string): string {
  const relative = (href: string) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(href)
  return markdown
    .replace(/(\]\()([^)\s]+)/g, (whole, open: string, href: string) =>
      relative(href) ? `${open}${absolute(href)}` : whole
    )
    .replace(/^(\[[^\]]+\]:\s*)(\S+)/gm, (whole, head: string, href: string) =>
      relative(href) ? `${head}${absolute(href)}` : whole
    )
}

/** A token's child tokens: inline text, list items, table cells. */
function childrenOf(token: Token): Token[] {
  const children: Token[] = []
  if ('tokens' in token && Array.isArray(token.tokens)) children.push(...token.tokens)
  if (token.type === 'list') children.push(...(token as Tokens.List).items)
  if (token.type === 'table') {
    const table = token as Tokens.Table
    for (const cell of [...table.header, ...table.rows.flat()]) children.push(...cell.tokens)
  }
  return children
}

/**
 * GitHub's anchor for a heading: lower-cased, punctuation but `-` and `_` dropped, spaces as `-`.
 *
 * @param heading - the heading's text as written (inline Markdown allowed)
 */
export function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/**
 * The anchors of a page's headings, with `-1`, `-2` … for repeated ones, as GitHub numbers them.
 *
 * @param markdown - the page
 */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const token of new Lexer().lex(markdown)) {
    if (token.type !== 'heading') continue
    const base = anchorOf((token as Tokens.Heading).text)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}
