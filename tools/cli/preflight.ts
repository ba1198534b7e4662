/**
 * @module tools/cli/preflight
 * `preflight`: reads the wrangler configuration (through wrangler's own reader, so TOML, JSON and
 * JSONC alike), the local secrets file beside it and the rules document, and prints every mistake
 * a first deploy would make, each with its fix (`preflight-checks.ts`). Exit 1 when there is an
 * error, 0 otherwise. `npm run preflight` in the repository, `npx edge-rate-limiter preflight`
 * from the package.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import {
  helpText,
  readCommandLine,
  usageMessage,
  USAGE_EXIT,
  UsageError,
  type CommandSpec,
} from './command-line'
import { dotenvNames, preflightFindings, type WranglerSettings } from './preflight-checks'

/**
 * The preflight's command line.
 *
 * @param program - how it is called
 */
function preflightSpec(program: string): CommandSpec {
  return {
    usage: [`${program} [options]`],
    about:
      'Checks the wrangler configuration and the rules document before a deploy, without an ' +
      'account: each mistake with its fix.',
    options: [
      {
        name: 'config',
        short: 'c',
        value: '<file>',
        default: 'the one wrangler finds here',
        does: 'the wrangler configuration to check',
      },
      {
        name: 'env',
        short: 'e',
        value: '<name>',
        default: 'none',
        does: 'the wrangler environment to check (none: the top level)',
      },
      {
        name: 'rules',
        value: '<file>',
        default: 'rules.json beside the configuration, if any',
        does: 'the rules document to validate',
      },
    ],
    notes: ['Exit status: 0 ready (notes aside), 1 a mistake to fix first, 2 usage.'],
  }
}

/**
 * Runs the preflight.
 *
 * @param argv - its arguments
 * @param program - how it is called, for the help
 * @returns the exit status
 */
export async function runPreflight(argv: readonly string[], program: string): Promise<number> {
  const spec = preflightSpec(program)
  let line
  try {
    line = readCommandLine(spec, argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(usageMessage(program, error))
    return USAGE_EXIT
  }
  if (line.help) {
    console.log(helpText(spec))
    return 0
  }
  const env = line.values.env as string | undefined
  const read = await readWranglerConfig(line.values.config as string | undefined, env)
  if (typeof read === 'string') {
    console.error(`preflight: ${read}`)
    return 1
  }
  const here = dirname(read.path)
  const shown = (path: string) => relative(process.cwd(), path) || path
  const rulesPath = (line.values.rules as string | undefined) ?? join(here, 'rules.json')
  const rules = existsSync(rulesPath)
    ? { file: shown(rulesPath), text: readFileSync(rulesPath, 'utf8') }
    : undefined
  if (!rules && line.values.rules !== undefined) {
    console.error(`preflight: ${rulesPath}: no such file`)
    return 1
  }
  const secretsPath = localSecretsFile(here, env)
  const findings = preflightFindings({
    config: read.config,
    configFile: shown(read.path),
    ...(env === undefined ? {} : { env }),
    localSecrets: {
      file: shown(secretsPath ?? join(here, '.dev.vars')),
      names: secretsPath ? dotenvNames(readFileSync(secretsPath, 'utf8')) : new Set(),
    },
    ...(rules ? { rules } : {}),
  })
  const checked = [shown(read.path), rules?.file].filter(Boolean).join(', ')
  console.log(`preflight: ${checked}${env ? ` (environment ${env})` : ''}`)
  for (const { severity, what, fix } of findings) console.log(`${severity}: ${what}\n  fix: ${fix}`)
  const errors = findings.filter((finding) => finding.severity === 'error').length
  console.log(errors > 0 ? `${errors} to fix before \`wrangler deploy\`` : 'ready to deploy')
  return errors > 0 ? 1 : 0
}

/**
 * The wrangler configuration as written, read by wrangler itself (the user's own copy: the
 * package does not bring one); a sentence saying why not when it cannot be read.
 */
async function readWranglerConfig(
  config: string | undefined,
  env: string | undefined
): Promise<{ path: string; config: WranglerSettings } | string> {
  let wrangler: typeof import('wrangler')
  try {
    wrangler = await import('wrangler')
  } catch {
    return 'no wrangler here: `npm install --save-dev wrangler`'
  }
  try {
    const { rawConfig, configPath } = wrangler.experimental_readRawConfig({
      ...(config === undefined ? {} : { config }),
      ...(env === undefined ? {} : { env }),
    })
    if (!configPath) return 'no wrangler configuration here (name one with --config)'
    if (env !== undefined && !(rawConfig.env && env in rawConfig.env))
      return `${configPath} has no environment "${env}"`
    return { path: configPath, config: rawConfig as WranglerSettings }
  } catch (error) {
    return (error as Error).message
  }
}

/** The local secrets file wrangler dev reads for `env`: `.dev.vars[.<env>]`, else `.env[.<env>]`. */
function localSecretsFile(dir: string, env: string | undefined): string | undefined {
  const names = ['.dev.vars', '.env'].flatMap((name) => (env ? [`${name}.${env}`, name] : [name]))
  return names.map((name) => join(dir, name)).find((path) => existsSync(path))
}
