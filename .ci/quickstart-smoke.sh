#!/usr/bin/env bash
# The README's quickstart, verbatim in spirit: `npm run dev`, then curl /api/hello until the
# bundled rule (10 per minute per IP) answers 429. Bounded: 90 s to start, 12 requests.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${SMOKE_PORT:-8799}
state=$(mktemp -d)
log=$(mktemp)
# Its own process group, so the whole tree (npm, wrangler, workerd) stops with it.
setsid npm run dev -- --port "$port" --persist-to "$state" >"$log" 2>&1 &
dev=$!
cleanup() {
  kill -- "-$dev" 2>/dev/null || true
  rm -rf "$state" "$log"
}
trap cleanup EXIT

for _ in $(seq 1 90); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  sleep 1
done

codes=""
for _ in $(seq 1 12); do
  codes+="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/hello") "
done
echo "quickstart status codes: $codes"
if [[ "$codes" != "200 200 200 200 200 200 200 200 200 200 429 429 " ]]; then
  echo "quickstart smoke test failed; wrangler dev log:" >&2
  cat "$log" >&2
  exit 1
fi
