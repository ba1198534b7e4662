/**
 * @module http/websocket
 * A WebSocket upgrade passed on to the client through a socket pair of our own, so the limiter
 * sees when the connection ends: a concurrency slot is held for as long as the socket is open.
 */

/**
 * A 101 response whose socket relays, both ways, the origin's socket in `response.webSocket`,
 * running `onClose` once when either side closes or fails.
 *
 * @param response - the origin's 101, carrying its `webSocket`
 * @param onClose - run once, when the connection is over
 */
export function relaySocket(response: Response, onClose: () => void): Response {
  const upstream = response.webSocket!
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket]
  upstream.accept()
  server.accept()
  let open = true
  const end = (): void => {
    if (!open) return
    open = false
    closeQuietly(server)
    closeQuietly(upstream)
    onClose()
  }
  for (const [from, to] of [
    [upstream, server],
    [server, upstream],
  ] as const) {
    from.addEventListener('message', (event) => {
      try {
        to.send(event.data)
      } catch {
        end()
      }
    })
    from.addEventListener('close', (event) => {
      // Pass the close on with its code where the protocol allows sending it.
      if (open && sendableCode(event.code)) closeQuietly(to, event.code, event.reason)
      end()
    })
    from.addEventListener('error', end)
  }
  const headers = new Headers(response.headers)
  // The runtime answers the client's handshake itself; the origin's hop-by-hop fields do not apply.
  for (const name of ['connection', 'upgrade', 'sec-websocket-accept', 'sec-websocket-extensions'])
    headers.delete(name)
  return new Response(null, { status: 101, headers, webSocket: client })
}

/** Codes a close frame may carry (RFC 6455 §7.4): 1005, 1006 and 1015 are only reported. */
function sendableCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) ||
    (code >= 3000 && code <= 4999)
  )
}

function closeQuietly(socket: WebSocket, code?: number, reason?: string): void {
  try {
    socket.close(code, reason)
  } catch {
    // Already closed or closing.
  }
}
