/**
 * @module http/request/body
 * Request bodies read with a size cap, so an admin call cannot make the Worker buffer without end.
 */
import { HttpError } from '../../errors'

/**
 * The body as text.
 *
 * @param request - the request
 * @param maxBytes - the most bytes accepted
 * @throws {HttpError} 413 when the body is longer than `maxBytes` (declared or actual)
 */
export async function readTextCapped(request: Request, maxBytes: number): Promise<string> {
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) throw contentTooLarge(maxBytes)
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      throw contentTooLarge(maxBytes)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return new TextDecoder().decode(bytes)
}

function contentTooLarge(maxBytes: number): HttpError {
  return new HttpError(413, 'Content Too Large', `The body must be at most ${maxBytes} bytes.`)
}
