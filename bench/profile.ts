// `npm run bench:profile -- [--scenario hot-key] [--target project] [--seconds 5]`: where a
// target's workerd CPU goes. Serves an unminified build with workerd's inspector open, loads it
// the way the bench does, records a V8 CPU profile of the Worker's isolate (its Durable Objects
// included) during the measured seconds, writes it to bench/.out/<target>-<scenario>.cpuprofile
// (open it in Chrome's DevTools) and prints the functions with the most self time per request.
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import {
  helpText,
  readCommandLine,
  usageMessage,
  UsageError,
  type CommandSpec,
} from '../tools/cli/command-line.ts'
import { buildLimiter, LIMITERS, startLimiter, type LimiterName } from './limiters.ts'
import { ipSource, measure, stopAll, warmUp } from './load.ts'
import { CONNECTIONS } from './options.ts'
import { SCENARIOS } from './scenarios.ts'
import { startBare, startOrigin, type Target } from './targets.ts'

const root = resolve(import.meta.dirname, '..')
const OUTDIR = 'bench/.out'
const LOAD_SCENARIOS = SCENARIOS.filter((s) => s.kind === 'load').map((s) => s.name)
const PROFILE: CommandSpec = {
  usage: ['npm run bench:profile -- [options]'],
  about:
    "Records a V8 CPU profile of a target's workerd isolate under load, writes it to " +
    `${OUTDIR}/<target>-<scenario>.cpuprofile and prints the functions with the most self time.`,
  options: [
    {
      name: 'scenario',
      value: '<name>',
      default: 'hot-key',
      does: `of: ${LOAD_SCENARIOS.join(', ')}`,
    },
    {
      name: 'target',
      value: '<name>',
      default: 'project',
      does: `of: bare, ${LIMITERS.join(', ')}`,
    },
    { name: 'seconds', value: '<n>', default: '5', does: 'measured seconds' },
    CONNECTIONS,
    {
      name: 'keys',
      value: '<n>',
      default: '2000',
      does: 'distinct keys of the many-keys and watched-keys scenarios',
    },
    { name: 'top', value: '<n>', default: '40', does: 'functions to print' },
  ],
  notes: ['Exit status: 0 done, 2 a bad option.'],
}
const values = readOptions()
const scenario = SCENARIOS.find((s) => s.name === values.scenario && s.kind === 'load')
const target = values.target
if (!scenario || (target !== 'bare' && !LIMITERS.includes(target as LimiterName))) {
  const problem = new UsageError(`no such scenario or target: ${values.scenario}, ${target}`)
  console.error(usageMessage('npm run bench:profile --', problem))
  process.exit(2)
}
const keys = Number(values.keys)

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const origin = await startOrigin()
const inspectorPort = await freePort()
let instance: Target | undefined
try {
  if (target === 'bare') instance = await startBare(origin.url, inspectorPort)
  else {
    const name = target as LimiterName
    // Unminified, so that the profile names the functions.
    const entry = await buildLimiter(name, root, join(OUTDIR, 'profile'), undefined, [
      '--minify=false',
    ])
    instance = await startLimiter(name, entry, origin.url, scenario.spec, 0, inspectorPort)
  }
  const nextIp = ipSource(scenario.keys, keys)
  await warmUp(instance.url, nextIp, scenario.keys === 'many' ? keys : 0)
  const inspector = await connect(inspectorPort)
  await inspector.send('Profiler.enable')
  await inspector.send('Profiler.start')
  const load = await measure(
    instance.url,
    Number(values.connections),
    Number(values.seconds),
    nextIp
  )
  const { profile } = (await inspector.send('Profiler.stop')) as { profile: Profile }
  inspector.close()
  const file = join(root, OUTDIR, `${target}-${scenario.name}.cpuprofile`)
  await writeFile(file, JSON.stringify(profile))
  console.log(`${target} ${scenario.name}: ${Math.round(load.rps)} req/s; profile in ${file}`)
  printTop(profile, load.requests, Number(values.top))
} finally {
  stopAll()
  await instance?.dispose()
  origin.stop()
}

/** Self time per function (µs per request), the largest first. */
function printTop(profile: Profile, requests: number, top: number): void {
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) =>
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  )
  const byFunction = new Map<string, number>()
  let total = 0
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)' || functionName === '(program)') continue
    const us = self.get(node.id) ?? 0
    total += us
    const label = `${functionName || '(anonymous)'} ${url.split('/').pop() ?? ''}:${lineNumber + 1}`
    byFunction.set(label, (byFunction.get(label) ?? 0) + us)
  }
  console.log(
    `JS self time: ${(total / requests).toFixed(1)} µs per request (idle and program left out)`
  )
  const rows = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)
  for (const [label, us] of rows)
    console.log(`${(us / requests).toFixed(2).padStart(8)} µs  ${label}`)
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer()
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}

/** A Chrome DevTools Protocol session with the Worker's isolate. */
async function connect(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string
  }[]
  const [first] = targets
  if (!first) throw new Error('workerd lists no inspector target')
  const socket = new WebSocket(first.webSocketDebuggerUrl)
  await new Promise((done, fail) => {
    socket.addEventListener('open', done)
    socket.addEventListener('error', fail)
  })
  let next = 1
  const pending = new Map<number, (result: unknown) => void>()
  socket.addEventListener('message', (event: MessageEvent) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown }
    if (message.id !== undefined) pending.get(message.id)?.(message.result)
  })
  return {
    send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
      const id = next++
      socket.send(JSON.stringify({ id, method, params }))
      return new Promise((done) => pending.set(id, done))
    },
    close: () => socket.close(),
  }
}

/** The command line's options with their defaults; `--help` prints the help, a bad one exits 2. */
function readOptions(): Record<
  'scenario' | 'target' | 'seconds' | 'connections' | 'keys' | 'top',
  string
> {
  try {
    const { values, help } = readCommandLine(PROFILE, process.argv.slice(2))
    if (help) {
      console.log(helpText(PROFILE))
      process.exit(0)
    }
    const defaults = Object.fromEntries(
      PROFILE.options.map((option) => [option.name, option.default])
    )
    return { ...defaults, ...values } as ReturnType<typeof readOptions>
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage('npm run bench:profile --', error))
    process.exit(2)
  }
}
