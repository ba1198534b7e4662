/**
 * @module http/request/websocket
 * A WebSocket upgrade passed on to the client through a socket pair of our own, so the limiter
 * sees the connection: when it ends (a concurrency slot is held for as long as the socket is
 * open), and each message the client sends (rules' `messages`, see `message-limits.ts`).
 */
import type { MessageGate } from './message-limits'

/**
 * A 101 response whose socket relays, both ways, the origin's socket in `response.webSocket`,
 * running `onClose` once when either side closes or fails. A close passes on its code and
 * reason; a failure closes the other side with 1011 (the origin's) or 1001 (the client's).
 * With a `gate`, the client's messages go to the origin in order, each once the gate let it,
 * and its close after them.
 *
 * @param response - the origin's 101, carrying its `webSocket`
 * @param onClose - run once, when the connection is over
 * @param gate - the connection's message limits, if any
 */
export function relaySocket(response: Response, onClose: () => void, gate?: MessageGate): Response {
  const upstream = response.webSocket!
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket]
  upstream.accept()
  server.accept()
  let open = true
  const end = (code?: number, reason?: string): void => {
    if (!open) return
    open = false
    closeQuietly(server, code, reason)
    closeQuietly(upstream, code, reason)
    gate?.end()
    onClose()
  }
  const forward = (to: WebSocket, data: string | ArrayBuffer): void => {
    try {
      to.send(data)
    } catch {
      end()
    }
  }
  // The client's messages and close, one after another: a message waiting for the gate is
  // never overtaken by the next one or by the close.
  let tail = Promise.resolve()
  const inOrder = (step: () => void | Promise<void>): void => {
    tail = tail.then(step).catch(() => end(1011, 'rate limiter error'))
  }
  server.addEventListener('message', ({ data }) => {
    if (!gate) return forward(upstream, data)
    inOrder(async () => {
      if (!open) return
      const verdict = await gate.admit()
      if (!open) return
      if (verdict.action === 'forward') forward(upstream, data)
      else if (verdict.action === 'close') end(1008, verdict.reason)
      else if (verdict.notice !== undefined) sendQuietly(server, verdict.notice)
    })
  })
  upstream.addEventListener('message', ({ data }) => forward(server, data))
  for (const [from, to, failCode, failReason] of [
    [upstream, server, 1011, 'origin connection failed'],
    [server, upstream, 1001, 'client connection failed'],
  ] as const) {
    const passClose = ({ code, reason }: CloseEvent): void => {
      // Pass the close on with its code where the protocol allows sending it.
      if (open && sendableCode(code)) closeQuietly(to, code, reason)
      end()
    }
    from.addEventListener('close', (event) =>
      gate && from === server ? inOrder(() => passClose(event)) : passClose(event)
    )
    from.addEventListener('error', () => end(failCode, failReason))
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

function sendQuietly(socket: WebSocket, data: string): void {
  try {
    socket.send(data)
  } catch {
    // The client is gone; its close ends the relay.
  }
}
