/**
 * @module rules/host
 * One spelling per host name.
 */

/**
 * A host name as rules see it: lower-case, without the trailing dot of a fully qualified name
 * (`Example.COM.` is `example.com`).
 *
 * @param host - `URL.hostname`, or a host pattern
 */
export function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '')
}
