/**
 * @module http/body
 * Request bodies read with a size cap, so an admin call cannot make the Worker buffer without end.
 */

/**
 * The body as text, or `undefined` if it is longer than `maxBytes` (declared or actual).
 *
 * @param request - the request
 * @param maxBytes - the most bytes accepted
 */
export async function readTextCapped(
  request: Request,
  maxBytes: number
): Promise<string | undefined> {
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) return undefined
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
      return undefined
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
