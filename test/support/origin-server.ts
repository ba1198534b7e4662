/**
 * @module test/support/origin-server
 * Vitest global setup: a real HTTP origin on 127.0.0.1 that echoes what it receives, so
 * forwarding is tested over the network as `ORIGIN=<url>` does it. A WebSocket upgrade gets a
 * socket that echoes each (unfragmented) message and answers a close; the text message
 * `__close <code> <reason>` makes it close with that code and reason instead.
 *
 * With `?cors` it answers CORS as an origin that trusts every `Origin` would (preflights: 204).
 *
 * It is also an alert webhook receiver: `POST /__webhook/<name>` records its body (answered 204;
 * `?status=500` answers that instead; `?hang=1` answers only after `POST /__webhook/<name>/release`),
 * and `GET /__webhook/<name>` lists the bodies recorded under that name.
 *
 * A WebSocket upgraded at `/__ws/<name>` records what it received: `GET /__ws/<name>` answers,
 * once that socket got its close, `{ messages, closeCode, closeReason }` (its text messages in
 * order, and the close frame's code and reason).
 */
import { createHash } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { TestProject } from 'vitest/node'

/** Webhook bodies by receiver name, and the answers held back by receivers that hang. */
const received = new Map<string, unknown[]>()
const held = new Map<string, (() => void)[]>()

/** What each recorded WebSocket received, and the answers waiting for its close. */
interface Recording {
  messages: string[]
  closeCode?: number
  closeReason?: string
  closed: boolean
  waiting: (() => void)[]
}
const recordings = new Map<string, Recording>()

function recording(name: string): Recording {
  let found = recordings.get(name)
  if (!found) recordings.set(name, (found = { messages: [], closed: false, waiting: [] }))
  return found
}

function recorded(name: string, res: ServerResponse): void {
  const found = recording(name)
  const answer = () => {
    const { messages, closeCode, closeReason } = found
    res.end(JSON.stringify({ messages, closeCode, closeReason }))
  }
  if (found.closed) answer()
  else found.waiting.push(answer)
}

function closeRecording(name: string, payload?: Buffer): void {
  const found = recording(name)
  if (found.closed) return
  found.closed = true
  if (payload && payload.length >= 2) {
    found.closeCode = payload.readUInt16BE(0)
    found.closeReason = payload.subarray(2).toString('utf8')
  }
  for (const answer of found.waiting.splice(0)) answer()
}

function webhook(method: string, url: URL, body: Buffer, res: ServerResponse): void {
  const [name = '', action] = url.pathname.split('/').slice(2)
  if (method === 'GET') return void res.end(JSON.stringify(received.get(name) ?? []))
  if (action === 'release') {
    for (const answer of held.get(name) ?? []) answer()
    held.delete(name)
    return void res.end()
  }
  received.set(name, [...(received.get(name) ?? []), JSON.parse(body.toString('utf8'))])
  const answer = () => {
    res.writeHead(Number(url.searchParams.get('status') ?? 204))
    res.end()
  }
  if (url.searchParams.has('hang')) held.set(name, [...(held.get(name) ?? []), answer])
  else answer()
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://origin.test')
      if (url.pathname.startsWith('/__webhook/'))
        return webhook(req.method ?? 'GET', url, Buffer.concat(chunks), res)
      if (url.pathname.startsWith('/__ws/')) return recorded(url.pathname.slice(6), res)
      const status = Number(url.searchParams.get('status') ?? 200)
      const preflight = req.method === 'OPTIONS' && 'access-control-request-method' in req.headers
      res.writeHead(preflight && url.searchParams.has('cors') ? 204 : status, {
        'content-type': 'application/json',
        'x-origin-header': 'kept',
        'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
        ...corsHeaders(url, req.headers.origin, preflight),
      })
      const body = Buffer.concat(chunks)
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: body.toString('utf8'),
          bodyLength: body.length,
        })
      )
    })
  })
  server.on('upgrade', (req, socket: Duplex) => {
    const path = new URL(req.url ?? '/', 'http://origin.test').pathname
    echoWebSocket(req.headers, socket, path.startsWith('/__ws/') ? path.slice(6) : undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  project.provide('originPort', (server.address() as AddressInfo).port)
  return () => {
    for (const answers of held.values()) for (const answer of answers) answer()
    for (const name of recordings.keys()) closeRecording(name)
    return new Promise((resolve) => server.close(() => resolve()))
  }
}

/** With `?cors`, the CORS answer of an origin that trusts every `Origin`, with credentials. */
function corsHeaders(url: URL, origin: string | undefined, preflight: boolean) {
  if (!url.searchParams.has('cors') || origin === undefined) return {}
  const headers: Record<string, string> = {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    vary: 'Origin',
  }
  if (!preflight) return { ...headers, 'access-control-expose-headers': 'X-Origin-Header' }
  return {
    ...headers,
    'access-control-allow-methods': 'GET, PUT',
    'access-control-allow-headers': 'x-api-key',
    'access-control-max-age': '600',
  }
}

/**
 * RFC 6455: the handshake, then each data frame sent back and a close answered; recorded under
 * `name` when given.
 */
function echoWebSocket(headers: Record<string, unknown>, socket: Duplex, name?: string): void {
  const accept = createHash('sha1')
    .update(`${String(headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest('base64')
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Accept: ${accept}\r\nX-Origin-Header: kept\r\n\r\n`
  )
  let pending = Buffer.alloc(0)
  socket.on('error', () => {})
  if (name !== undefined) socket.on('close', () => closeRecording(name))
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk])
    for (let frame = readFrame(pending); frame; frame = readFrame(pending)) {
      pending = pending.subarray(frame.size)
      const text = frame.opcode === 0x1 ? frame.payload.toString('utf8') : undefined
      if (name !== undefined && text !== undefined) recording(name).messages.push(text)
      const closing = text === undefined ? undefined : /^__close (\d+) (.*)$/.exec(text)
      if (closing) {
        const payload = Buffer.alloc(2)
        payload.writeUInt16BE(Number(closing[1]))
        return void socket.end(frameOf(0x8, Buffer.concat([payload, Buffer.from(closing[2]!)])))
      }
      if (frame.opcode === 0x8) {
        if (name !== undefined) closeRecording(name, frame.payload)
        return void socket.end(frameOf(0x8, frame.payload))
      }
      if (frame.opcode === 0x1 || frame.opcode === 0x2)
        socket.write(frameOf(frame.opcode, frame.payload))
    }
  })
}

function readFrame(buffer: Buffer): { opcode: number; payload: Buffer; size: number } | undefined {
  if (buffer.length < 2) return undefined
  let length = buffer[1]! & 0x7f
  let offset = 2
  if (length === 126) {
    if (buffer.length < 4) return undefined
    length = buffer.readUInt16BE(2)
    offset = 4
  }
  const masked = (buffer[1]! & 0x80) !== 0
  const size = offset + (masked ? 4 : 0) + length
  if (length === 127 || buffer.length < size) return undefined
  const payload = Buffer.from(buffer.subarray(size - length, size))
  if (masked) payload.forEach((byte, i) => (payload[i] = byte ^ buffer[offset + (i % 4)]!))
  return { opcode: buffer[0]! & 0x0f, payload, size }
}

function frameOf(opcode: number, payload: Buffer): Buffer {
  const head =
    payload.length < 126
      ? Buffer.from([0x80 | opcode, payload.length])
      : Buffer.from([0x80 | opcode, 126, payload.length >> 8, payload.length & 0xff])
  return Buffer.concat([head, payload])
}

declare module 'vitest' {
  export interface ProvidedContext {
    originPort: number
  }
}
