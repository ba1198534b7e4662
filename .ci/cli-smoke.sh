#!/usr/bin/env bash
# `npm run rules`: validate exits 0 or lists errors with paths (and what an unknown field likely
# meant) and exits 1; push --local writes the document into the local RULES namespace. Every
# command-line entry answers -h and --help and refuses an unknown option; the simulator
# reproduces its committed output.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run -s rules -- validate rules.json
for example in examples/*.json; do npm run -s rules -- validate "$example"; done

if out=$(npm run -s rules -- validate test/fixtures/rules/bad-duration.json 2>&1); then
  echo "validate accepted a bad document" >&2
  exit 1
fi
grep -q 'rules\[1\].period: "1x" is not a duration' <<<"$out" || { echo "unexpected output: $out" >&2; exit 1; }
echo "validate rejects bad-duration.json with the path of the bad field"

# An unknown field close to a known one, and a known field at the wrong level: what was meant.
misplaced=$(mktemp)
echo '{"version":1,"rules":[{"id":"a","key":["ip"],"algorithm":"sliding-window","limit":5,"period":"1m","methods":["POST"],"match":{"method":["GET"]}}]}' >"$misplaced"
out=$(npm run -s rules -- validate "$misplaced" 2>&1 || true)
rm -f "$misplaced"
for expected in 'rules\[0\]: unknown field "methods": it belongs under "match"' \
  'rules\[0\].match: unknown field "method": did you mean "methods"?'; do
  grep -q "$expected" <<<"$out" || { echo "validate did not say what was meant: $out" >&2; exit 1; }
done
echo "validate says what a misspelt or misplaced field meant"

# One pass finds every error: a bad limit behind an unknown algorithm, an unknown field, a
# duplicate id and a replaces naming no rule, each on its own line with its path.
out=$(npm run -s rules -- validate test/fixtures/rules/many-errors.json 2>&1 || true)
for expected in 'rules\[0\].algorithm:' 'rules\[0\].limit: 0 must be at least 1' 'rules\[1\]: unknown field "windw"' \
  'rules\[2\].id: duplicate id "a"' 'rules\[2\].replaces\[0\]:' '^6 errors in '; do
  grep -q "$expected" <<<"$out" || { echo "validate missed $expected in one pass: $out" >&2; exit 1; }
done
echo "validate reports all 6 errors of many-errors.json in one pass"

# Every command-line entry explains itself: -h and --help print a usage (exit 0) in which every
# option carries its default, and an unknown option is named, with a pointer to --help (exit 2).
options_without_default() {
  # An option's line starts with "-" after spaces; lines indented deeper continue it.
  awk '/^ +-/ { if (entry != "" && entry !~ /\(default: /) print entry; entry = $0; next }
       substr($0, 1, 24) ~ /^ +$/ && entry != "" { entry = entry " " $0; next }
       { if (entry != "" && entry !~ /\(default: /) print entry; entry = "" }
       END { if (entry != "" && entry !~ /\(default: /) print entry }'
}
explains_itself() {
  local help short status=0 out
  help=$("$@" --help) || { echo "$* --help: exit $?" >&2; exit 1; }
  short=$("$@" -h) || { echo "$* -h: exit $?" >&2; exit 1; }
  [[ "$help" == "$short" ]] || { echo "$*: -h and --help differ" >&2; exit 1; }
  grep -q '^usage: ' <<<"$help" || { echo "$* --help: no usage line" >&2; exit 1; }
  grep -qE '^ +-' <<<"$help" || { echo "$* --help: no option listed" >&2; exit 1; }
  missing=$(options_without_default <<<"$help")
  [[ -z "$missing" ]] || { echo "$* --help: options without a default:" >&2; echo "$missing" >&2; exit 1; }
  out=$("$@" --no-such-option 2>&1) || status=$?
  ((status == 2)) || { echo "$* --no-such-option: exit $status, not 2" >&2; exit 1; }
  grep -q 'unknown option --no-such-option.*--help' <<<"$out" ||
    { echo "$* --no-such-option: $out" >&2; exit 1; }
}
for entry in "rules --" "rules -- push" "rules -- rehearse" "preflight --" "simulate --" \
  "simulate:scale --" "fuzz --" "bench --" "bench:profile --" "fleet --"; do
  # shellcheck disable=SC2086
  explains_itself npm run -s $entry
  echo "npm run $entry --help: every option with its default; an unknown option refused (exit 2)"
done
for ask in --help -h help "push --help" "help push"; do
  # shellcheck disable=SC2086
  out=$(npm run -s rules -- $ask)
  grep -q -- '--persist-to <dir>' <<<"$out" || { echo "rules $ask: no help" >&2; exit 1; }
done
out=$(npm run -s simulate -- help)
grep -q -- '--out <dir>' <<<"$out" || { echo "simulate help: no help" >&2; exit 1; }
echo "rules and simulate also answer help (rules help <command> too)"

state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
npm run -s rules -- push rules.json --local --persist-to "$state" >/dev/null
stored=$(npx wrangler kv key get --local --persist-to "$state" --binding RULES rules 2>/dev/null)
[[ "$stored" == "$(cat rules.json)" ]] || { echo "push --local did not store rules.json" >&2; exit 1; }
echo "push --local stored rules.json in the RULES namespace"

# Envoy: a YAML configuration validates and imports to the committed document; bad ones are
# refused with envoyproxy/ratelimit's messages and the place of the bad descriptor.
npm run -s rules -- validate examples/envoy/messaging.yaml
npm run -s rules -- import examples/envoy/messaging.yaml --schema ../../rules.schema.json \
  | diff - examples/envoy/messaging.json
echo "import examples/envoy/messaging.yaml reproduces examples/envoy/messaging.json"
for bad in test/fixtures/envoy/*.yaml; do
  if out=$(npm run -s rules -- validate "$bad" 2>&1); then
    echo "validate accepted $bad" >&2
    exit 1
  fi
  echo "refused: $out"
done

# The simulator: the committed charts and tables are what the default run produces (it is
# seeded and byte-for-byte reproducible); without --out it writes elsewhere, and says which rules
# it applied and which algorithm fits.
summary=$(npm run -s simulate 2>&1)
rm -rf simulation-out
grep -q '^Rules applied: the default rules' <<<"$summary" || { echo "simulate: no rules named" >&2; exit 1; }
last=$(tail -8 <<<"$summary")
grep -q '^never over the limit in any window *sliding-log' <<<"$last" ||
  { echo "simulate: the summary does not end with which algorithm fits" >&2; exit 1; }
git diff --quiet -- docs/simulation || { echo "simulate without --out changed docs/simulation" >&2; exit 1; }
sim=$(mktemp -d)
npm run -s simulate -- --out "$sim" >/dev/null
diff -r "$sim" docs/simulation
echo "npm run simulate reproduces docs/simulation"
rm -rf "$sim"

# A recorded trace against a rules document, with every decision written out.
sim=$(mktemp -d)
npm run -s simulate -- --trace test/fixtures/simulate/trace.csv --rules test/fixtures/simulate/rules.json \
  --decisions "$sim/decisions.jsonl" --out "$sim" >/dev/null
expected='{"t":20,"key":"alice","rule":"two-per-second","allowed":false,"remaining":0}'
grep -qF "$expected" "$sim/decisions.jsonl" || { echo "trace replay decided otherwise" >&2; cat "$sim/decisions.jsonl" >&2; exit 1; }
echo "npm run simulate --trace --rules --decisions: the third request in a second is denied"
rm -rf "$sim"

# A rules change rehearsed on recorded traffic: one address with three keys, one key from three
# addresses; per address -> per key newly denies the shared key's third request (1 of 6).
fixtures=test/fixtures/rehearse
rehearse=(npm run -s rules -- rehearse --current "$fixtures/current.json" --proposed "$fixtures/proposed.json")
out=$("${rehearse[@]}" --traffic "$fixtures/traffic.csv" --fail-if 'newly-denied>20%')
grep -q 'newly denied 1 (16.667%, 1 key), newly allowed 1' <<<"$out" || { echo "rehearse: $out" >&2; exit 1; }
grep -q '^pass: newly-denied>20%' <<<"$out" || { echo "rehearse: no verdict: $out" >&2; exit 1; }
if out=$("${rehearse[@]}" --traffic "$fixtures/traffic.csv" --fail-if 'newly-denied>10%'); then
  echo "rehearse did not fail a crossed --fail-if" >&2
  exit 1
fi
grep -q '^FAIL: newly-denied>10%' <<<"$out" || { echo "rehearse: $out" >&2; exit 1; }
if out=$("${rehearse[@]}" --traffic "$fixtures/bad.csv" 2>&1); then
  echo "rehearse accepted a bad time" >&2
  exit 1
fi
grep -q 'bad.csv:3: the time "yesterday" is not a time' <<<"$out" || { echo "rehearse: $out" >&2; exit 1; }
grep -q -- '--fail-if <cond>' <<<"$(npm run -s rules -- rehearse --help)" || { echo "rehearse: no help" >&2; exit 1; }
# The proposed rules decided in a second thread (the default) or in this one: the same report.
for threads in 1 2; do
  "${rehearse[@]}" --traffic "$fixtures/traffic.csv" --json --threads "$threads" >"$state/rehearse-$threads.json"
done
cmp "$state/rehearse-1.json" "$state/rehearse-2.json" || { echo "rehearse: 1 and 2 threads differ" >&2; exit 1; }
echo "rules rehearse: newly denied counted, --fail-if exits 1 when crossed, a bad line named, --help, 1 thread = 2"
