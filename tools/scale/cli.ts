/**
 * @module tools/scale/cli
 * `npm run simulate:scale -- [options]`: the entry. The limiter's modules import
 * `cloudflare:workers`, which Node does not have; a resolve hook maps it to the simulator's shim
 * (`workers-shim.ts`). The hook is registered before anything imports those modules, so the rest
 * of the simulator is loaded afterwards, with a dynamic import. Hooks chain last-registered
 * first: this one answers `cloudflare:workers` and passes every other specifier on to tsx's,
 * whose load hook then compiles the shim like any other TypeScript file.
 */
import { register } from 'node:module'

const shim = new URL('./workers-shim.ts', import.meta.url).href
const hook = `export async function resolve(specifier, context, next) {
  if (specifier === 'cloudflare:workers') return { url: ${JSON.stringify(shim)}, shortCircuit: true }
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(hook)}`)
const { main } = await import('./main')
process.exitCode = await main(process.argv.slice(2))
