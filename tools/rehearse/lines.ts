/**
 * @module tools/rehearse/lines
 * A traffic file's lines, streamed: bytes in, plain or gzip (told by the gzip magic number, not
 * by the file's name), decoded as UTF-8 and split on LF (a CR before it dropped). Pure: the
 * caller opens the file (Node's fs, a browser's `File`), so the same code reads it everywhere.
 */

/** Lines in the order read; `first` is the 1-based number of `lines[0]`. */
export interface LineBatch {
  first: number
  lines: string[]
}

/**
 * Whether bytes begin as a gzip member (RFC 1952: 0x1f 0x8b).
 *
 * @param head - the first bytes of a file
 */
export function isGzip(head: Uint8Array): boolean {
  return head[0] === 0x1f && head[1] === 0x8b
}

/**
 * The lines of a byte stream, a batch per chunk read (so a consumer does its work per line in
 * plain loops, not a promise per line). The last line needs no final LF.
 *
 * @param bytes - the file's contents, gzipped or not
 * @throws {TypeError} from the decompressor when gzipped bytes are corrupt or cut short
 */
export async function* lineBatches(bytes: ReadableStream<Uint8Array>): AsyncGenerator<LineBatch> {
  const reader = bytes.getReader()
  const head = await reader.read()
  if (head.done) return
  const again = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head.value)
    },
    async pull(controller) {
      const next = await reader.read()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  const plain = isGzip(head.value)
    ? again.pipeThrough(new DecompressionStream('gzip') as TransformStream<Uint8Array, Uint8Array>)
    : again
  const text = plain.pipeThrough(new TextDecoderStream())
  let rest = ''
  let next = 1
  for await (const chunk of text as unknown as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n')
    rest = lines.pop()!
    if (lines.length === 0) continue
    for (let i = 0; i < lines.length; i++) lines[i] = withoutCr(lines[i]!)
    yield { first: next, lines }
    next += lines.length
  }
  if (rest !== '') yield { first: next, lines: [withoutCr(rest)] }
}

function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}
