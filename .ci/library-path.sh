#!/usr/bin/env bash
# The library path, run as a new user would run it (CI calls this file from its own
# shell; `npm run test:library-path` runs it too, from the Node outside the project). Starting
# from the shell's own Node 20:
#  1. a clone of this repository (HEAD, with uncommitted changes to tracked files) next to a new,
#     empty project directory, both in a fresh temporary directory outside the repository;
#  2. every block marked `<!-- library-path: … -->` in the README's walk-through, then in its
#     continuation in docs/library.md, in order, as written (see
#     tools/docs/library-path.ts): files written into the project, commands run in the clone or
#     the project (`fail`: one that must exit non-zero), `start` run in the background until it
#     answers on port 8787;
#  3. what it printed checked: 200s then 429s, the client waiting out a 429 before its 200, and
#     the package's command line (`npx edge-rate-limiter`) on a valid and a broken rules document
#     and its preflight;
#  4. the package's own checks on the tarball the README built: at most 220 kB packed, every link
#     of its README absolute, and its declarations clean under the README's nodenext and strict
#     flags without skipLibCheck.
# If port 8787 is taken, LIBRARY_PATH_PORT (or a free port) stands for it in the blocks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false

fail() {
  echo "library-path test failed: $1" >&2
  if [[ -f "${work:-}/dev.log" ]]; then tail -40 "$work/dev.log" >&2; fi
  exit 1
}

# Run through npm (`npm run test:library-path`), PATH starts with this project's node_modules/.bin
# and its Node 22: drop those entries, to start from the Node the shell had.
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v -e '/node_modules/\.bin$' -e '/node-gyp-bin$' | paste -sd: -)
shell_node=$(command -v node) || fail "no node on PATH"
shell_node_version=$(node --version)
echo "the shell's node: $shell_node $shell_node_version"
[[ "$shell_node_version" == v20.* ]] || fail "the README's path starts from Node 20; this shell's is $shell_node_version"

work=$(mktemp -d)
clone="$work/edge-rate-limiter"
app="$work/my-api"
dev_pid=""
cleanup() {
  if [[ -n "$dev_pid" ]]; then kill -- "-$dev_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The pages' blocks, read with the project's own Node 22 (from its `node` devDependency).
"$root/node_modules/.bin/node" tools/docs/library-path.ts README.md docs/library.md >"$work/steps.sh"

revision=$(git stash create 2>/dev/null || true)
git clone -q --no-checkout "$root" "$clone"
git -C "$clone" checkout -q "${revision:-HEAD}"
mkdir "$app"

port=${LIBRARY_PATH_PORT:-8787}
if (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  port=$("$root/node_modules/.bin/node" -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
fi
# The blocks say 8787; another port, when 8787 is taken, stands in for it.
as_written() {
  if [[ "$port" == 8787 ]]; then cat; else sed "s/localhost:8787/localhost:$port/g"; fi
}

step_file() {
  local path="$1" at="$2"
  echo "--- $at: $path"
  mkdir -p "$(dirname "$app/$path")"
  as_written >"$app/$path"
}
step_run() {
  local where="$1" at="$2" dir script
  dir=$([[ "$where" == clone ]] && echo "$clone" || echo "$app")
  script=$(as_written)
  echo "--- $at: in ${dir/#$work\//}:"
  sed 's/^/    $ /' <<<"$script"
  local status=0
  (cd "$dir" && timeout 600 bash -euo pipefail -c "$script") >"$work/step.log" 2>&1 || status=$?
  cat "$work/step.log" >>"$work/output.log"
  # npm's warnings (EBADENGINE on Node 20, install scripts) are expected; the rest is shown.
  grep -v -e 'EBADENGINE' -e '^npm warn' "$work/step.log" | tail -25 | sed 's/^/      /' || true
  ((status == 0)) || fail "$at exited with $status"
}
step_fail() {
  local at="$1" script status=0
  script=$(as_written)
  echo "--- $at: in my-api, expected to fail:"
  sed 's/^/    $ /' <<<"$script"
  (cd "$app" && timeout 600 bash -euo pipefail -c "$script") >"$work/step.log" 2>&1 || status=$?
  cat "$work/step.log" >>"$work/output.log"
  grep -v -e 'EBADENGINE' -e '^npm warn' "$work/step.log" | tail -25 | sed 's/^/      /' || true
  ((status != 0)) || fail "$at exited with 0; the page says it fails"
}
step_start() {
  local at="$1" script
  script=$(as_written)
  [[ "$port" == 8787 ]] || script+=" -- --port $port"
  echo "--- $at: in my-api, in the background: $script"
  # Its own process group (setsid keeps the pid), so cleanup stops wrangler and workerd with it.
  setsid bash -c "cd \"\$1\" && $script" start "$app" >"$work/dev.log" 2>&1 &
  dev_pid=$!
  for _ in $(seq 1 120); do
    curl -s -o /dev/null "http://localhost:$port/" && return 0
    kill -0 "$dev_pid" 2>/dev/null || fail "$at stopped"
    sleep 0.5
  done
  fail "$at: nothing answered on port $port within 60 s"
}

# shellcheck source=/dev/null
source "$work/steps.sh"

# 3. What the pages say it prints.
codes=$(grep -oE '^(200 )+(429 ?)+$' "$work/output.log" || true)
[[ -n "$codes" ]] || fail "no line of 200s then 429s"
grep -qE '^request 1 got 429: waited [0-9]+ ms \(retry-after\)$' "$work/output.log" ||
  fail "the client did not wait out a 429"
grep -qE '^then 200: ' "$work/output.log" || fail "the client did not end on a 200"
echo "status codes: $codes"
grep -E '^(request [0-9]+ got|then [0-9]+:)' "$work/output.log"

# The package's command line, from the new project: a valid document, a broken one with what
# was meant, and the preflight on the project's wrangler.toml and rules.json.
for expected in '^rules\.json: valid \(1 rules, mode enforce\)$' \
  '^broken\.json: rules\[0\]: unknown field "method": did you mean "methods", under "match"\?$' \
  '^1 error in broken\.json$' '^ready to deploy'; do
  grep -qE "$expected" "$work/output.log" || fail "the package's command line did not print $expected"
done
echo "npx edge-rate-limiter: rules validate (valid, and broken with a hint), preflight"
# A rules change rehearsed from the package, on two threads (the bundle is the second's entry too).
fixtures="$clone/test/fixtures/rehearse"
rehearsed=$(cd "$app" && timeout 120 npx edge-rate-limiter rules rehearse --current "$fixtures/current.json" \
  --proposed "$fixtures/proposed.json" --traffic "$fixtures/traffic.csv" --threads 2 2>&1 || true)
grep -q 'newly denied 1 (16.667%, 1 key), newly allowed 1' <<<"$rehearsed" ||
  { echo "$rehearsed"; fail "the package's rules rehearse did not report the fixture's change"; }
echo "npx edge-rate-limiter: rules rehearse on two threads"

# 4. The tarball the README built.
tarball=$(cd "$clone" && ls edge-rate-limiter-*.tgz)
size=$(stat -c %s "$clone/$tarball")
echo "packed $tarball: $size bytes, $(tar tzf "$clone/$tarball" | wc -l) files; the largest:"
tar tzvf "$clone/$tarball" | sort -k3 -n -r | awk 'NR <= 5 { print "  " $3 "  " $6 }'
((size <= 220000)) || fail "the tarball is $size bytes (at most 220 kB)"
# Its README is read on the registry's page, where only absolute links lead anywhere.
relative=$(tar xzf "$clone/$tarball" -O package/README.md | grep -oE '\]\([^)]*\)|^\[[^]]+\]: .*' |
  grep -vE '\]\((https?:|#)|\]: https?:' || true)
[[ -z "$relative" ]] || { echo "$relative"; fail "the package's README has links that lead nowhere on the registry"; }
echo "the package's README: every link absolute"
cd "$app"
strict=$(PATH="$app/node_modules/.bin:$PATH" timeout 120 tsc -p . --skipLibCheck false 2>&1 || true)
# wrangler's generated file fails nodenext's own checks by itself; the package's must not.
ours=$(grep -E '^[^ ]+\([0-9]+,[0-9]+\): error' <<<"$strict" | grep -v '^worker-configuration\.d\.ts(' || true)
[[ -z "$ours" ]] || { echo "$ours"; fail "errors outside worker-configuration.d.ts without skipLibCheck"; }
echo "declarations: clean under nodenext and strict, without skipLibCheck"
