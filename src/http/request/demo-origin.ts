/**
 * @module http/request/demo-origin
 * A stand-in origin for local use (`ORIGIN=demo`): it echoes what it received, so what the
 * limiter forwards can be seen and tested.
 */

/**
 * Answers with JSON describing the request: method, path, query, headers and the body's
 * length and text. `?status=<code>` picks the status, for trying error pass-through. A
 * WebSocket upgrade gets a socket that echoes every message back; `POST /login` is a stand-in
 * login (see {@link DEMO_PASSWORD}).
 *
 * @param request - the forwarded request
 */
export async function demoOrigin(request: Request): Promise<Response> {
  if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') return echoSocket()
  const url = new URL(request.url)
  if (url.pathname === '/login' && request.method === 'POST') return demoLogin(request)
  const body = request.body ? await request.text() : ''
  const status = Number(url.searchParams.get('status') ?? 200)
  const payload = {
    origin: 'demo',
    method: request.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: Object.fromEntries(request.headers),
    bodyLength: body.length,
    body: body.slice(0, 1024),
  }
  const code = Number.isInteger(status) && status >= 200 && status <= 599 ? status : 200
  const bodyless = request.method === 'HEAD' || code === 204 || code === 205 || code === 304
  return new Response(bodyless ? null : JSON.stringify(payload, null, 2), {
    status: code,
    headers: { 'content-type': 'application/json', 'x-demo-origin': '1' },
  })
}

/** The password every account of the demo login takes. */
export const DEMO_PASSWORD = 'open-sesame'

/**
 * A stand-in login (`POST /login`): 200 when `X-Password` is {@link DEMO_PASSWORD}, 401
 * otherwise, for trying a rule that counts failed logins only (`countOn`).
 */
function demoLogin(request: Request): Response {
  const ok = request.headers.get('x-password') === DEMO_PASSWORD
  return Response.json(
    { origin: 'demo', login: ok ? 'ok' : 'failed', account: request.headers.get('x-account') },
    { status: ok ? 200 : 401 }
  )
}

/** A WebSocket that sends each message back, and closes when the client does. */
function echoSocket(): Response {
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket]
  server.accept()
  server.addEventListener('message', (event) => server.send(event.data))
  server.addEventListener('close', () => closeQuietly(server))
  return new Response(null, { status: 101, webSocket: client })
}

function closeQuietly(socket: WebSocket): void {
  try {
    socket.close()
  } catch {
    // Already closed (the runtime may answer a close frame itself).
  }
}
