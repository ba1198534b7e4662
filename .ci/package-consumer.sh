#!/usr/bin/env bash
# The package as a consumer gets it (`npm run test:consumer`, about 20 s):
#  1. the README shows examples/library-worker's files as they are;
#  2. `npm pack` (lib/ built first), under 230 kB (210 kB before countOn, degrade and WebSocket message limits were documented, 200 kB before edge-rate-limiter/client and CORS, 150 kB before the operator page bundled uPlot; README.md, always packed, is about 139 kB raw, most of the growth);
#  3. the tarball installed into a copy of examples/library-worker, with hono and wrangler from the
#     npm cache where they are;
#  4. `wrangler types`, then tsc under the example's flags (module and moduleResolution nodenext,
#     strict, exactOptionalPropertyTypes, noPropertyAccessFromIndexSignature), and again without
#     skipLibCheck: no error may come from edge-rate-limiter's declarations or the example (with a
#     file using edge-rate-limiter/client added to it); then that subpath loaded and run by Node;
#  5. the Worker in workerd (`wrangler dev` on a free 127.0.0.1 port): 200, 200, then 429.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/node_modules/.bin:$PATH" # Node 22 from the `node` devDependency
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false

work=$(mktemp -d)
dev_pid=""
cleanup() {
  if [[ -n "$dev_pid" ]]; then kill -- "-$dev_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "consumer test failed: $1" >&2
  if [[ -f "$work/dev.log" ]]; then cat "$work/dev.log" >&2; fi
  exit 1
}

# 1. The README quotes the example verbatim.
node -e '
  const fs = require("fs")
  const readme = fs.readFileSync("README.md", "utf8")
  for (const file of ["src/index.ts", "wrangler.toml", "tsconfig.json"]) {
    const text = fs.readFileSync(`examples/library-worker/${file}`, "utf8")
    if (!readme.includes("```" + (file.endsWith(".ts") ? "ts" : file.endsWith(".toml") ? "toml" : "jsonc") + "\n" + text + "```")) {
      console.error(`README.md does not show examples/library-worker/${file} as it is`)
      process.exit(1)
    }
  }
' || fail "README and examples/library-worker differ"

# 2. Pack.
npm run --silent build:lib
npm pack --ignore-scripts --pack-destination "$work" --loglevel=error >/dev/null
tarball=$(cd "$work" && ls edge-rate-limiter-*.tgz)
size=$(stat -c %s "$work/$tarball")
files=$(tar tzf "$work/$tarball" | wc -l)
echo "packed $tarball: $size bytes, $files files"
((size < 230000)) || fail "the tarball is $size bytes (limit 230 kB)"

# 3. Install it into a copy of the example.
app="$work/app"
cp -R examples/library-worker "$app"
node -e '
  const fs = require("fs")
  const [file, tarball] = process.argv.slice(1)
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"))
  pkg.dependencies["edge-rate-limiter"] = `file:../${tarball}`
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n")
' "$app/package.json" "$tarball"
cd "$app"
timeout 120 npm install --prefer-offline --no-audit --no-fund --loglevel=error ||
  fail "npm install of the tarball"
export PATH="$app/node_modules/.bin:$PATH" # the example's own wrangler and tsc

# 4. Types, with a use of the client subpath added to the example's sources.
cat >"$app/src/client-check.ts" <<'TS'
// Added by .ci/package-consumer.sh: edge-rate-limiter/client under the example's strict flags.
import {
  fetchWithRateLimit,
  type FetchWithRateLimitOptions,
  type RateLimitResult,
} from 'edge-rate-limiter/client'

const options: FetchWithRateLimitOptions = { maxRetries: 2, maxWaitMs: 5_000 }

export async function statusOf(url: string, signal: AbortSignal): Promise<number> {
  const result: RateLimitResult = await fetchWithRateLimit(url, { method: 'GET' }, { ...options, signal })
  for (const { attempt, status, waitMs, hint } of result.waits) console.log(attempt, status, waitMs, hint)
  return result.response.status
}
TS
timeout 60 npm run --silent types >"$work/types.log" 2>&1 || { cat "$work/types.log"; fail "wrangler types"; }
timeout 60 npm run --silent typecheck || fail "tsc under the example's tsconfig"
strict=$(timeout 60 tsc -p . --skipLibCheck false 2>&1 || true)
# wrangler's generated file is exempt: it fails nodenext's checks by itself (see tsconfig.json).
ours=$(grep -E '^[^ ]+\([0-9]+,[0-9]+\): error' <<<"$strict" | grep -v '^worker-configuration\.d\.ts(' || true)
[[ -z "$ours" ]] || { echo "$ours"; fail "errors outside worker-configuration.d.ts without skipLibCheck"; }
echo "types: clean under nodenext and the strict flags (declarations checked too)"
node --input-type=module -e '
  import { fetchWithRateLimit } from "edge-rate-limiter/client"
  const answers = [new Response(null, { status: 429, headers: { "retry-after": "0" } }), new Response("ok")]
  const fetch = async () => answers.shift()
  const { response, waits } = await fetchWithRateLimit("http://api.test/", undefined, { fetch })
  if (response.status !== 200 || waits.length !== 1 || waits[0].hint !== "retry-after") process.exit(1)
' || fail "edge-rate-limiter/client in Node: 429 with Retry-After: 0, then 200"
echo "edge-rate-limiter/client: loads and retries in Node"

# 5. One Worker in workerd.
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
setsid wrangler dev --ip 127.0.0.1 --port "$port" --inspector-port 0 --persist-to "$work/state" \
  >"$work/dev.log" 2>&1 &
dev_pid=$!
for _ in $(seq 1 120); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  kill -0 "$dev_pid" 2>/dev/null || fail "wrangler dev exited"
  sleep 0.5
done
codes=""
policy=""
for _ in 1 2 3; do
  response=$(curl -s -D - -o /dev/null --max-time 10 "http://127.0.0.1:$port/api/hello" | tr -d '\r')
  codes+="$(head -1 <<<"$response" | cut -d' ' -f2) "
  policy+=$(grep -i '^ratelimit-policy:' <<<"$response" || true)
done
echo "through the installed package in workerd: $codes"
[[ "$codes" == "200 200 429 " ]] || fail "expected 200 200 429"
[[ "$policy" == *api-per-ip* ]] || fail "no RateLimit-Policy header naming api-per-ip"
