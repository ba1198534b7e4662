// The package build leaves JSON imports to tools/build/lib.ts, which replaces them with JavaScript
// modules: a consumer's bundler or Node then needs no JSON import support.
declare module '*.json' {
  const value: unknown
  export default value
}
