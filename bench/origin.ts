// The benchmark origin. Runs as a child process so that answering requests never competes with
// autocannon for the parent's event loop; it reports its port over IPC.
import { createServer } from 'node:http'

const body = '{"ok":true}'

const server = createServer((request, response) => {
  request.resume()
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
  response.end(body)
})

// workerd keeps upstream connections pooled; Node's 5 s default would close them mid-run and
// mix reconnect costs into the numbers.
server.keepAliveTimeout = 65_000

server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
})

// The IPC channel closes when the parent exits or crashes: never outlive it.
process.on('disconnect', () => process.exit(0))
