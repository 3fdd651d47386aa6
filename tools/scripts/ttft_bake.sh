#!/usr/bin/env bash
# Time to first token with and without a baked prompt, on the synthetic stories15M model
# with a 200-token prefix: `ember run` reports the time from the session's creation to
# the first sampled token (creating the session, restoring a baked state or prefilling
# the prefix, sampling). Prints the median of REPS runs of each, and their ratio.
#   usage: tools/scripts/ttft_bake.sh [EMBER_BINARY] [REPS] [THREADS]
# Measure on a quiet machine: the figures are meaningless while other jobs run.
set -euo pipefail
ember="${1:-build/tools/ember}"
reps="${2:-21}"
threads="${3:-1}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$ember" convert --synthetic stories15M -o "$tmp/plain.ember" 2>/dev/null
# A prefix of 200 tokens: BOS, the dummy-prefix space and 66 characters the synthetic
# vocabulary has no piece for (3 byte-fallback tokens each). Checked below.
prefix=$(printf '漢%.0s' $(seq 66))
n=$("$ember" tokenize -m "$tmp/plain.ember" -p "$prefix" | wc -w)
[ "$n" = 200 ] || { echo "the prefix is $n tokens, not 200" >&2; exit 1; }
"$ember" bake -m "$tmp/plain.ember" -p "$prefix" -o "$tmp/baked.ember" 2>/dev/null

ttft() {  # model prompt -> milliseconds
  "$ember" run -m "$1" -p "$2" -n 1 --temp 0 -t "$threads" 2>&1 >/dev/null |
    sed -n 's/.*first token \([0-9.]*\) ms after.*/\1/p'
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

for i in $(seq "$reps"); do ttft "$tmp/plain.ember" "$prefix"; done | median >"$tmp/plain"
for i in $(seq "$reps"); do ttft "$tmp/baked.ember" ""; done | median >"$tmp/baked"
plain=$(cat "$tmp/plain")
baked=$(cat "$tmp/baked")
echo "stories15M (synthetic, f32), prefix of $n tokens, $threads thread(s), median of $reps runs:"
echo "  prefilled prefix: time to first token $plain ms"
echo "  baked prefix:     time to first token $baked ms"
awk -v p="$plain" -v b="$baked" 'BEGIN { if (b > 0) printf "  ratio: %.1fx\n", p / b }'
