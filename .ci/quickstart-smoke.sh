#!/usr/bin/env bash
# The README's local workflows against real `wrangler dev`, each bounded in time:
#  1. `npm run dev`, then curl /api/hello until the bundled rule (10 per minute) answers 429, and
#     the login walk-through (five failed logins, then the account locked);
#  2. `wrangler kv key put --local --binding RULES rules …` takes effect within RULES_REFRESH_SECONDS;
#  3. `wrangler dev --var ORIGIN:http://127.0.0.1:<port>` forwards to that origin.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${SMOKE_PORT:-8799}
state=$(mktemp -d)
log=$(mktemp)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  rm -rf "$state" "$log"
}
trap cleanup EXIT

fail() {
  echo "smoke test failed: $1; wrangler dev log:" >&2
  cat "$log" >&2
  exit 1
}

# Starts a command in its own process group, so the whole tree (npm, wrangler, workerd) stops with it.
start() {
  setsid "$@" >>"$log" 2>&1 &
  pids+=($!)
}

wait_for() {
  for _ in $(seq 1 90); do
    curl -s -o /dev/null "$1" && return 0
    sleep 1
  done
  fail "nothing answered at $1"
}

stop_all() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  pids=()
  sleep 1
}

# 1. The quickstart.
start npm run dev -- --port "$port" --persist-to "$state" --var RULES_REFRESH_SECONDS:5
wait_for "http://127.0.0.1:$port/"
codes=""
for _ in $(seq 1 12); do
  codes+="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/hello") "
done
echo "quickstart status codes: $codes"
[[ "$codes" == "200 200 200 200 200 200 200 200 200 200 429 429 " ]] || fail "expected ten 200s, then 429s"

# 1b. The login walk-through of docs/policies.md: failed logins counted, then the account locked.
login() {
  curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/login" -H "x-account: $1" -H "x-password: $2"
}
codes=""
for _ in 1 2 3 4 5; do codes+="$(login ann wrong) "; done
codes+="$(login ann open-sesame) $(login bob open-sesame)"
echo "login walk-through: $codes"
[[ "$codes" == "401 401 401 401 401 429 200" ]] || fail "expected five 401s, the locked account's 429, then 200"

# 2. A rules document in the local RULES namespace replaces the bundled rules.
npx wrangler kv key put --local --persist-to "$state" --binding RULES rules \
  '{"version":1,"rules":[{"id":"smoke-kv","match":{"path":"/kv/*"},"key":["ip"],"algorithm":"token-bucket","limit":2,"period":"1h"}]}' >>"$log" 2>&1
written=$(date +%s)
seen=""
for _ in $(seq 1 30); do
  policy=$(curl -s -D - -o /dev/null "http://127.0.0.1:$port/kv/x" | tr -d '\r' | grep -i '^ratelimit-policy:' || true)
  if [[ "$policy" == *smoke-kv* ]]; then seen=$(($(date +%s) - written)); break; fi
  sleep 0.5
done
[[ -n "$seen" ]] || fail "the KV rules document did not take effect within 15 s"
echo "KV rules document in force after ${seen} s (RULES_REFRESH_SECONDS=5)"
stop_all

# 3. ORIGIN set to a server of one's own.
origin_port=$((port + 1))
start node -e "require('http').createServer((q, s) => s.end('from-origin ' + q.method + ' ' + q.url)).listen($origin_port, '127.0.0.1')"
start npx wrangler dev --port "$port" --persist-to "$state" --var "ORIGIN:http://127.0.0.1:$origin_port"
wait_for "http://127.0.0.1:$port/"
body=$(curl -s "http://127.0.0.1:$port/api/echo?q=1")
echo "through ORIGIN: $body"
[[ "$body" == "from-origin GET /api/echo?q=1" ]] || fail "ORIGIN did not receive the request"
