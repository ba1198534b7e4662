/**
 * @module tools/rehearse/bench
 * `npm run bench:rehearse`: the entry; runs `bench-main.ts` as one bundle (`tools/bundled.ts`).
 */
import { fileURLToPath } from 'node:url'
import { runBundled } from '../bundled.ts'

process.exitCode = await runBundled(
  fileURLToPath(new URL('./bench-main.ts', import.meta.url)),
  'bench-rehearse'
)
