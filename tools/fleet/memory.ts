/**
 * @module tools/fleet/memory
 * Each isolate's JavaScript heap, read from outside through workerd's inspector: one target per
 * Worker, each asked `Runtime.getHeapUsage` over the DevTools protocol.
 */
import type { Runtime } from './runtime'

interface Target {
  title?: string
  webSocketDebuggerUrl?: string
}

/**
 * The heap in use of every isolate (MB, one decimal), the objects' Worker's included.
 *
 * @param runtime - the running fleet
 */
export async function isolateMemoryMb(runtime: Pick<Runtime, 'inspectorUrl'>): Promise<number[]> {
  const response = await fetch(new URL('/json/list', runtime.inspectorUrl))
  const targets = (await response.json()) as Target[]
  const sizes = await Promise.all(
    targets.flatMap((t) => (t.webSocketDebuggerUrl ? [heapUsed(t.webSocketDebuggerUrl)] : []))
  )
  return sizes.map((bytes) => Math.round(bytes / 104_857.6) / 10)
}

function heapUsed(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url)
    const timer = setTimeout(() => {
      socket.close()
      reject(new Error(`no heap usage from ${url}`))
    }, 5_000)
    socket.addEventListener('open', () =>
      socket.send(JSON.stringify({ id: 1, method: 'Runtime.getHeapUsage' }))
    )
    socket.addEventListener('message', (event: { data: unknown }) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number
        result?: { usedSize: number }
      }
      if (message.id !== 1) return
      clearTimeout(timer)
      socket.close()
      resolve(message.result?.usedSize ?? 0)
    })
    socket.addEventListener('error', () => {
      clearTimeout(timer)
      reject(new Error(`inspector ${url} failed`))
    })
  })
}
