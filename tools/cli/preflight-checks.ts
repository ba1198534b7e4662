/**
 * @module tools/cli/preflight-checks
 * What `preflight` finds wrong before a first deploy, each finding with its fix: a placeholder
 * KV namespace id, a Worker on workers.dev (or a custom domain) with no `ORIGIN` behind it, zone
 * routes and an `ORIGIN` that contradict them, a route or zone left as the example's, no place
 * the Worker can be reached, a rules document that does not validate, and the admin API or
 * `/json` asked for with no token set. Pure: it reads the wrangler configuration as written,
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
/** Hosts reserved for examples (RFC 2606), as the docs' route and origin use them. */
const EXAMPLE_HOST = /(^|\.)example\.(com|net|org)$/

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

function namespaceFindings(settings: WranglerSettings, file: string): Finding[] {
  const findings: Finding[] = []
  for (const { binding, id, preview_id } of settings.kv_namespaces ?? []) {
    for (const [field, value] of [
      ['id', id],
      ['preview_id', preview_id],
    ] as const) {
      if (value === undefined || (NAMESPACE_ID.test(value) && !/^(.)\1*$/.test(value))) continue
      findings.push({
        severity: 'error',
        what: `the KV namespace bound as ${binding} has ${field} = ${JSON.stringify(value)}, a placeholder: wrangler deploy fails, or writes to no namespace of yours`,
        fix: `\`npx wrangler kv namespace create ${binding}\`, then put the id it prints as ${field} in ${file} (or remove ${field}: wrangler deploy then creates the namespace)`,
      })
    }
  }
  return findings
}

/** A route's host, and whether it is a custom domain (the Worker is the origin there). */
function routeOf(entry: RouteEntry): { pattern: string; zone?: string; customDomain: boolean } {
  if (typeof entry === 'string') return { pattern: entry, customDomain: false }
  const zone = entry.zone_name
  return {
    pattern: entry.pattern,
    customDomain: entry.custom_domain === true,
    ...(zone ? { zone } : {}),
  }
}

function targetFindings(settings: WranglerSettings, file: string): Finding[] {
  const routes = [...(settings.route ? [settings.route] : []), ...(settings.routes ?? [])].map(
    routeOf
  )
  const findings: Finding[] = []
  for (const route of routes) {
    const host = route.pattern
      .replace(/^\*?\.?/, '')
      .split('/')[0]!
      .replace(/^\*\.?/, '')
    if (EXAMPLE_HOST.test(host) || (route.zone !== undefined && EXAMPLE_HOST.test(route.zone)))
      findings.push({
        severity: 'error',
        what: `the route ${JSON.stringify(route.pattern)} is the example's, not a host of your zone`,
        fix: `in ${file}, set the pattern to your host (api.yours.com/*) and zone_name to your zone`,
      })
  }
  const zoneRoutes = routes.filter((route) => !route.customDomain)
  const customDomains = routes.filter((route) => route.customDomain)
  // wrangler's default: on workers.dev unless the Worker has routes.
  const workersDev = settings.workers_dev ?? routes.length === 0
  if (!workersDev && routes.length === 0) {
    findings.push({
      severity: 'error',
      what: 'workers_dev is off and there are no routes: the deployed Worker would be reachable nowhere',
      fix: `in ${file}, add routes = [{ pattern = "api.yours.com/*", zone_name = "yours.com" }], or set workers_dev = true`,
    })
  }
  // Only the limiter in front of an origin has ORIGIN; a Worker of one's own answers itself.
  if (!settings.vars || !('ORIGIN' in settings.vars)) return findings
  const origin = String(settings.vars.ORIGIN ?? '').trim()
  const noOriginBehind = [
    ...(workersDev ? ['workers_dev is on'] : []),
    ...customDomains.map((route) => `${route.pattern} is a custom domain`),
  ]
  if (origin === '' && noOriginBehind.length > 0) {
    findings.push({
      severity: 'error',
      what: `${noOriginBehind.join(' and ')} and ORIGIN is empty: no origin stands behind the Worker there, so every allowed request would be sent back to the Worker itself`,
      fix: `set ORIGIN to your origin's URL in ${file} ([vars] ORIGIN = "https://origin.yours.com"), or put the Worker in front of your origin on a zone route and set workers_dev = false`,
    })
  }
  if (origin !== '' && zoneRoutes.length > 0) {
    const patterns = zoneRoutes.map((route) => JSON.stringify(route.pattern)).join(', ')
    findings.push({
      severity: 'error',
      what: `the route ${patterns} puts the Worker in front of the origin your zone's DNS points at, and ORIGIN = ${JSON.stringify(origin)} sends every allowed request ${origin === 'demo' ? 'to the bundled demo origin' : `to ${origin}`} instead`,
      fix: `on a zone route leave ORIGIN empty (ORIGIN = ""); to forward to another server, drop the route and use workers_dev or a custom domain with ORIGIN`,
    })
  } else if (origin === 'demo') {
    findings.push({
      severity: 'note',
      what: 'ORIGIN = "demo": the deployed Worker answers from the bundled demo origin, not from yours',
      fix: `fine for a try-out; to limit your own API set ORIGIN to its URL, or use a zone route with ORIGIN empty (docs/deploying.md)`,
    })
  } else if (origin !== '' && !/^https?:\/\/[^\s/]+/.test(origin)) {
    findings.push({
      severity: 'error',
      what: `ORIGIN = ${JSON.stringify(origin)} is not an http(s) URL: every allowed request would get a 502`,
      fix: `set ORIGIN to a base URL such as "https://origin.yours.com", "demo", or "" on a zone route`,
    })
  }
  return findings
}

function ruleFindings(rules: PreflightInput['rules']): Finding[] {
  if (!rules) return []
  try {
    parseRulesText(rules.text, rules.file)
    return []
  } catch (error) {
    if (!(error instanceof RuleConfigError)) throw error
    let written: unknown
    try {
      written = JSON.parse(rules.text)
    } catch {
      written = undefined
    }
    return error.problems.map((problem) => ({
      severity: 'error' as const,
      what: `${rules.file}: ${withHint(problem, written)}`,
      fix: `correct it (\`rules validate ${rules.file}\` lists every error), then deploy: the Worker falls back to these rules when KV has none`,
    }))
  }
}

function tokenFindings(settings: WranglerSettings, input: PreflightInput): Finding[] {
  const findings: Finding[] = []
  const required = new Set(settings.secrets?.required ?? [])
  const known = (name: string) => required.has(name) || input.localSecrets.names.has(name)
  const adminPrefix = settings.vars?.ADMIN_PREFIX
  if (typeof adminPrefix === 'string' && adminPrefix.trim() !== '' && !known('ADMIN_TOKEN')) {
    findings.push({
      severity: 'error',
      what: `ADMIN_PREFIX = ${JSON.stringify(adminPrefix)} asks for the admin API, but ADMIN_TOKEN is set neither in ${input.localSecrets.file} nor named under [secrets] required: every admin route would answer 404`,
      fix: `\`npx wrangler secret put ADMIN_TOKEN\` (a long random value: openssl rand -hex 32) and add it to [secrets] required = ["ADMIN_TOKEN"] in ${input.configFile}; locally, ADMIN_TOKEN=… in ${input.localSecrets.file}; or remove ADMIN_PREFIX if you do not want the admin API`,
    })
  }
  if (input.rules && declaresDomains(input.rules.text) && !known('DECISION_TOKEN')) {
    findings.push({
      severity: 'error',
      what: `${input.rules.file} has Envoy "domains", but DECISION_TOKEN is set neither in ${input.localSecrets.file} nor named under [secrets] required: /json would answer 404`,
      fix: `\`npx wrangler secret put DECISION_TOKEN\` and add it to [secrets] required in ${input.configFile}; locally, DECISION_TOKEN=… in ${input.localSecrets.file}`,
    })
  }
  return findings
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
