/**
 * @module tools/scale/cli
 * `npm run simulate:scale -- [options]`: the entry. It runs the simulator with the limiter's
 * modules, unchanged, as one bundle (`tools/bundled.ts`). The limiter's modules import
 * `cloudflare:workers`, which Node does not have: the bundle aliases it to the simulator's shim
 * (`workers-shim.ts`). One module keeps module boundaries and tsx's name helpers off the hot
 * path: CI's `--check` (mostly 10 and 100 isolates) takes 13 s against 24 s compiled file by file
 * through tsx's loader hook. At 3,000 isolates, where the time goes to memory (each request
 * touches a cold isolate's state), it changes little.
 */
import { fileURLToPath } from 'node:url'
import { runBundled } from '../bundled.ts'

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))
process.exitCode = await runBundled(here('./main.ts'), 'simulate-scale', {
  'cloudflare:workers': here('./workers-shim.ts'),
})
