/**
 * @module tools/cli/preflight-checks
 * What `preflight` finds wrong before a first deploy, each finding with its fix: a placeholder
 * KV namespace id, a Worker on workers.dev (or a custom domain) with no `ORIGIN` behind it, zone
 * routes and an `ORIGIN` that contradict them, no place the Worker can be reached, an `ORIGIN`
 * that is no URL, a rules document that does not validate, and the admin API or `/json` asked
 * for with no token set. Pure: it reads the wrangler configuration as written,
 * the names a `.dev.vars` sets and the rules document's text; `preflight.ts` gathers them.
 */
import { RuleConfigError } from '../../src/errors'
import { parseRulesText } from '../../src/rules'
import { withHint } from './suggest'

/** A route as a wrangler configuration writes it. */
type RouteEntry =
  string | { pattern: string; zone_name?: string; zone_id?: string; custom_domain?: boolean }

/** The parts of a wrangler configuration (or one of its environments) the checks read. */
export interface WranglerSettings {
  workers_dev?: boolean
  route?: RouteEntry
  routes?: RouteEntry[]
  vars?: Record<string, unknown>
  kv_namespaces?: { binding: string; id?: string; preview_id?: string }[]
  secrets?: { required?: string[] }
  env?: Record<string, WranglerSettings>
}

/** What the checks read. */
export interface PreflightInput {
  /** The wrangler configuration as written, and its file's name for messages. */
  config: WranglerSettings
  configFile: string
  /** The wrangler environment deployed (`--env`), if any. */
  env?: string
  /** The names the local secrets file sets (`.dev.vars`, `.env`), and its name. */
  localSecrets: { file: string; names: ReadonlySet<string> }
  /** The rules document to check: its file and text, if there is one. */
  rules?: { file: string; text: string }
}

/** One thing found: an error stops a deploy, a note is worth knowing. */
export interface Finding {
  severity: 'error' | 'note'
  /** What is wrong, and what it would do. */
  what: string
  /** What to do about it. */
  fix: string
}

/** A KV namespace id as wrangler prints it: 32 lower-case hexadecimal digits. */
const NAMESPACE_ID = /^[0-9a-f]{32}$/

/**
 * Everything wrong with a deploy of this configuration that can be seen without an account.
 *
 * @param input - the configuration, local secrets and rules document
 * @returns the findings, errors first
 */
export function preflightFindings(input: PreflightInput): Finding[] {
  const settings = effective(input.config, input.env)
  const findings = [
    ...namespaceFindings(settings, input.configFile),
    ...targetFindings(settings, input.configFile),
    ...ruleFindings(input.rules),
    ...tokenFindings(settings, input),
  ]
  return [
    ...findings.filter((finding) => finding.severity === 'error'),
    ...findings.filter((finding) => finding.severity === 'note'),
  ]
}

/**
 * The settings a deploy to `env` uses: routes and `workers_dev` are inherited from the top
 * level when the environment has none; vars, KV namespaces and secrets are not (as wrangler
 * reads them).
 */
function effective(config: WranglerSettings, env: string | undefined): WranglerSettings {
  if (env === undefined) return config
  const own = config.env?.[env] ?? {}
  return {
    ...own,
    workers_dev: own.workers_dev ?? config.workers_dev,
    ...(own.route === undefined && own.routes === undefined
      ? { route: config.route, routes: config.routes }
      : {}),
  }
}

const error = (what: string, fix: string): Finding => ({ severity: 'error', what, fix })

function namespaceFindings(settings: WranglerSettings, file: string): Finding[] {
  return (settings.kv_namespaces ?? []).flatMap(({ binding, id, preview_id }) =>
    Object.entries({ id, preview_id })
      .filter(([, value]) => value !== undefined && !isNamespaceId(value))
      .map(([field, value]) =>
        error(
          `the KV namespace bound as ${binding} has ${field} = ${JSON.stringify(value)}, a placeholder`,
          `\`npx wrangler kv namespace create ${binding}\` and put the id it prints in ${file} (or remove ${field}: wrangler deploy creates one)`
        )
      )
  )
}

/** Whether a namespace id is one wrangler could print: hexadecimal, and not one digit repeated. */
function isNamespaceId(value: string | undefined): boolean {
  return NAMESPACE_ID.test(value ?? '') && !/^(.)\1*$/.test(value!)
}

function targetFindings(settings: WranglerSettings, file: string): Finding[] {
  const routes = [...(settings.route ? [settings.route] : []), ...(settings.routes ?? [])].map(
    (entry) => (typeof entry === 'string' ? { pattern: entry } : entry)
  )
  const findings: Finding[] = []
  const zoneRoutes = routes.filter((route) => !('custom_domain' in route && route.custom_domain))
  // wrangler's default: on workers.dev unless the Worker has routes.
  const workersDev = settings.workers_dev ?? routes.length === 0
  if (!workersDev && routes.length === 0)
    findings.push(
      error(
        'workers_dev is off and there are no routes: the deployed Worker would be reachable nowhere',
        `in ${file}, add routes = [{ pattern = "api.yours.com/*", zone_name = "yours.com" }], or set workers_dev = true`
      )
    )
  // Only the limiter in front of an origin has ORIGIN; a Worker of one's own answers itself.
  if (!settings.vars || !('ORIGIN' in settings.vars)) return findings
  const origin = String(settings.vars.ORIGIN ?? '').trim()
  const noOriginBehind = [
    ...(workersDev ? ['workers_dev is on'] : []),
    ...routes
      .filter((route) => !zoneRoutes.includes(route))
      .map(({ pattern }) => `${pattern} is a custom domain`),
  ]
  if (origin === '' && noOriginBehind.length > 0)
    findings.push(
      error(
        `${noOriginBehind.join(' and ')} and ORIGIN is empty: no origin stands behind the Worker there; allowed requests would go back to the Worker itself`,
        `set ORIGIN to your origin's URL in ${file}, or use a zone route in front of your origin and workers_dev = false`
      )
    )
  if (origin !== '' && zoneRoutes.length > 0)
    findings.push(
      error(
        `the route ${zoneRoutes.map(({ pattern }) => JSON.stringify(pattern)).join(', ')} puts the Worker in front of the origin your zone's DNS points at, and ORIGIN = ${JSON.stringify(origin)} sends every allowed request ${origin === 'demo' ? 'to the bundled demo origin' : `to ${origin}`} instead`,
        'on a zone route leave ORIGIN empty; to forward elsewhere, use workers_dev or a custom domain with ORIGIN'
      )
    )
  else if (origin === 'demo')
    findings.push({
      severity: 'note',
      what: 'ORIGIN = "demo": the deployed Worker answers from the bundled demo origin, not from yours',
      fix: 'fine for a try-out; for your API set ORIGIN to its URL, or use a zone route with ORIGIN empty',
    })
  else if (origin !== '' && !/^https?:\/\/[^\s/]+/.test(origin))
    findings.push(
      error(
        `ORIGIN = ${JSON.stringify(origin)} is not an http(s) URL: every allowed request would get a 502`,
        'set ORIGIN to a base URL such as "https://origin.yours.com", "demo", or "" on a zone route'
      )
    )
  return findings
}

function ruleFindings(rules: PreflightInput['rules']): Finding[] {
  if (!rules) return []
  try {
    parseRulesText(rules.text, rules.file)
    return []
  } catch (failure) {
    if (!(failure instanceof RuleConfigError)) throw failure
    let written: unknown
    try {
      written = JSON.parse(rules.text)
    } catch {
      written = undefined
    }
    return failure.problems.map((problem) =>
      error(
        `${rules.file}: ${withHint(problem, written)}`,
        `correct it (\`rules validate ${rules.file}\` lists every error): the Worker falls back to these rules`
      )
    )
  }
}

/** The tokens the limiter's own endpoints need, and what asks for each. */
const TOKENS = [
  {
    token: 'ADMIN_TOKEN',
    asked: ({ vars }: WranglerSettings) =>
      typeof vars?.ADMIN_PREFIX === 'string' && vars.ADMIN_PREFIX.trim() !== ''
        ? `ADMIN_PREFIX = ${JSON.stringify(vars.ADMIN_PREFIX)} asks for the admin API`
        : undefined,
    endpoint: 'every admin route',
    otherwise: '; or remove ADMIN_PREFIX if you do not want the admin API',
  },
  {
    token: 'DECISION_TOKEN',
    asked: (_settings: WranglerSettings, rules: PreflightInput['rules']) =>
      rules && declaresDomains(rules.text) ? `${rules.file} has Envoy "domains"` : undefined,
    endpoint: '/json',
    otherwise: '',
  },
]

function tokenFindings(settings: WranglerSettings, input: PreflightInput): Finding[] {
  const required = new Set(settings.secrets?.required ?? [])
  const local = input.localSecrets
  return TOKENS.flatMap(({ token, asked, endpoint, otherwise }): Finding[] => {
    const asking = asked(settings, input.rules)
    if (asking === undefined || required.has(token) || local.names.has(token)) return []
    return [
      error(
        `${asking}, but ${token} is set neither in ${local.file} nor named under [secrets] required: ${endpoint} would answer 404`,
        `\`npx wrangler secret put ${token}\` and name it under [secrets] required in ${input.configFile}; locally, ${token}=… in ${local.file}${otherwise}`
      ),
    ]
  })
}

function declaresDomains(text: string): boolean {
  try {
    const document = JSON.parse(text) as { domains?: unknown }
    return Array.isArray(document.domains) && document.domains.length > 0
  } catch {
    return false
  }
}

/**
 * The names a dotenv file (`.dev.vars`, `.env`) sets.
 *
 * @param text - the file
 */
export function dotenvNames(text: string): Set<string> {
  const names = new Set<string>()
  for (const line of text.split('\n')) {
    const name = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1]
    if (name) names.add(name)
  }
  return names
}
