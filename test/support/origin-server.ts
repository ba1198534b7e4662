/**
 * @module test/support/origin-server
 * Vitest global setup: a real HTTP origin on 127.0.0.1 that echoes what it receives, so
 * forwarding is tested over the network as `ORIGIN=<url>` does it.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://origin.test')
      const status = Number(url.searchParams.get('status') ?? 200)
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-origin-header': 'kept',
        'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  project.provide('originPort', (server.address() as AddressInfo).port)
  return () => new Promise((resolve) => server.close(() => resolve()))
}

declare module 'vitest' {
  export interface ProvidedContext {
    originPort: number
  }
}
