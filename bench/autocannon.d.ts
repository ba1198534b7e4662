// autocannon ships no types; load.ts declares the small part of its API it uses.
declare module 'autocannon' {
  const autocannon: (options: Record<string, unknown>) => never
  export default autocannon
}
