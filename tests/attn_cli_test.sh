#!/usr/bin/env bash
# ember attn on stories260K: the SVG, CSV and .npy outputs (shapes, rows, the causal
# mask, a slice equal to the full record) and bad input (clear message, status 1).
# usage: attn_cli_test.sh EMBER_BINARY MODEL.ember
set -uo pipefail
ember="$1"
model="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
source "$(dirname "$0")/cli_expect.sh"

prompt="Once upon a time there was a little girl"  # 12 tokens with BOS

# CSV: 5 layers x 8 heads x (1 + 2 + ... + 12) causal pairs, then the header.
expect 0 "12 tokens, 5 layers x 8 heads" -- "$ember" attn -m "$model" -p "$prompt" \
  -o "$tmp/all.csv"
[ "$(head -1 "$tmp/all.csv")" = "layer,head,query,key,query_id,key_id,query_token,key_token,weight" ] ||
  fail "CSV header: $(head -1 "$tmp/all.csv")"
[ "$(wc -l <"$tmp/all.csv")" = $((5 * 8 * 78 + 1)) ] || fail "CSV rows: $(wc -l <"$tmp/all.csv")"
# Every key <= query, each (layer, head, query) row sums to 1, BOS sees only itself.
awk -F, 'NR > 1 {
    if ($4 > $3) { print "masked pair " $0; bad = 1 }
    sum[$1 "," $2 "," $3] += $NF
  }
  NR > 1 && $3 == 0 && $NF != 1 { print "BOS row " $0; bad = 1 }
  END {
    for (k in sum) if (sum[k] < 0.99999 || sum[k] > 1.00001) { print "sum " k " " sum[k]; bad = 1 }
    exit bad
  }' "$tmp/all.csv" || fail "CSV rows are not causal probability rows"
grep -q '^1,3,11,10,421,315,l,ir,' "$tmp/all.csv" || fail "CSV lacks layer 1 head 3 l->ir"

# One layer and head: the same numbers as the full export.
expect 0 "1 layer x 1 head" -- "$ember" attn -m "$model" -p "$prompt" --layer 1 --head 3 \
  --format csv -o "$tmp/one.csv"
[ "$(wc -l <"$tmp/one.csv")" = 79 ] || fail "one-head CSV rows: $(wc -l <"$tmp/one.csv")"
grep '^1,3,' "$tmp/all.csv" | cmp -s - <(tail -n +2 "$tmp/one.csv") ||
  fail "layer 1 head 3 differs from the full export"

# CSV quoting: labels with a comma or a quote.
expect 0 "wrote" -- "$ember" attn -m "$model" -p 'a,"b' --layer 0 --head 0 -o "$tmp/q.csv"
grep -qF '0,0,1,0,' "$tmp/q.csv" || fail "quoted CSV: $(cat "$tmp/q.csv")"
grep -qF ',",",' "$tmp/q.csv" || fail "comma label not quoted: $(cat "$tmp/q.csv")"
grep -qF ',"""",' "$tmp/q.csv" || fail "quote label not quoted: $(cat "$tmp/q.csv")"

# .npy: float32 [layers, heads, tokens, tokens].
expect 0 "wrote" -- "$ember" attn -m "$model" -p "$prompt" --head 5 -o "$tmp/a.npy"
head -c 128 "$tmp/a.npy" | grep -qaF "'descr': '<f4', 'fortran_order': False, 'shape': (5, 1, 12, 12)" ||
  fail "npy header: $(head -c 128 "$tmp/a.npy" | tr -d '\0')"
[ "$(stat -c %s "$tmp/a.npy")" = $((128 + 5 * 12 * 12 * 4)) ] ||
  fail "npy size $(stat -c %s "$tmp/a.npy")"
expect 0 "wrote stdout" -- "$ember" attn -m "$model" -p "$prompt" --format npy
cmp -s "$tmp/stdout" <("$ember" attn -m "$model" -p "$prompt" -o /dev/stdout --format npy 2>/dev/null) ||
  fail "npy on stdout differs"

# SVG on stdout (the default), and --tokens.
expect 0 "wrote stdout" -- "$ember" attn -m "$model" --tokens 1,403,407 --layer 4
grep -q '^<svg xmlns="http://www.w3.org/2000/svg" width="[0-9]*" height="[0-9]*"' "$tmp/stdout" ||
  fail "no <svg> root on stdout"
[ "$(grep -c '<g id="panel-' "$tmp/stdout")" = 8 ] || fail "layer 4: not 8 panels"
grep -qF 'layer 4 · head 7' "$tmp/stdout" || fail "no panel title 'layer 4 · head 7'"
grep -qF '&lt;s&gt;' "$tmp/stdout" || fail "BOS label not escaped"
grep -q '<script' "$tmp/stdout" && fail "script in the SVG"
expect 0 "wrote $tmp/x.svg" -- "$ember" attn -m "$model" -p "Once" --values off --columns 8 \
  -o "$tmp/x.svg"
grep -q '<tspan' "$tmp/x.svg" && fail "--values off printed values"

# Bad input.
expect 1 "missing -m MODEL" -- "$ember" attn -p x
expect 1 "give either -p PROMPT or --tokens" -- "$ember" attn -m "$model"
expect 1 "give either -p PROMPT or --tokens" -- "$ember" attn -m "$model" -p x --tokens 1
expect 1 "--layer: '5' is not 'all' or a layer in [0, 5)" -- "$ember" attn -m "$model" -p x --layer 5
expect 1 "--layer: 'first' is not 'all' or a layer in [0, 5)" -- "$ember" attn -m "$model" -p x --layer first
expect 1 "--head: '-1' is not 'all' or a head in [0, 8)" -- "$ember" attn -m "$model" -p x --head -1
expect 1 "--format: 'png' is not svg, csv or npy" -- "$ember" attn -m "$model" -p x --format png
expect 1 "--values: 'some' is not auto, on or off" -- "$ember" attn -m "$model" -p x --values some
expect 1 "--columns: 0 is outside" -- "$ember" attn -m "$model" -p x --columns 0
expect 1 "no tokens to run" -- "$ember" attn -m "$model" -p "" --no-bos
expect 1 "--tokens: 512 is outside" -- "$ember" attn -m "$model" --tokens 1,512
expect 1 "not valid UTF-8" -- "$ember" attn -m "$model" -p $'\xff'
expect 1 "exceed the model's context of 512" -- "$ember" attn -m "$model" \
  -p "$(printf 'x%.0s' $(seq 600))"
long="$(printf 'x%.0s' $(seq 400))"  # about 400 tokens: 40 panels of 160000 cells
expect 1 "too many for one picture: choose --layer and --head" -- "$ember" attn -m "$model" \
  -p "$long" -o "$tmp/long.svg"
expect 0 "1 layer x 1 head" -- "$ember" attn -m "$model" -p "$long" --layer 0 --head 0 \
  -o "$tmp/long.svg"
expect 1 "cannot create '/nonexistent/a.svg'" -- "$ember" attn -m "$model" -p x \
  -o /nonexistent/a.svg
expect 1 "cannot open '/nonexistent.ember'" -- "$ember" attn -m /nonexistent.ember -p x

if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all attn CLI checks passed"
