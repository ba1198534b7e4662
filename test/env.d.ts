/// <reference types="vite/client" />
declare namespace Cloudflare {
  interface Env {
    FLAKY_LIMITER: DurableObjectNamespace<
      import('./support/flaky-limiter-object').FlakyLimiterObject
    >
    TEST_ORIGIN: string
  }
}
