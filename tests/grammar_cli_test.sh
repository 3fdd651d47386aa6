#!/usr/bin/env bash
# `ember run` under a grammar: --json, --json-schema FILE and --grammar FILE constrain
# the text (each finished text checked by `ember grammar --text`), the end of text comes
# where the grammar can end, and a text cut off by -n or the context mid-structure is
# status 1.
# Bad grammars and conflicting flags are refused with a message. `ember grammar --tools`
# writes the grammar of a tool call in each family's syntax.
# usage: grammar_cli_test.sh EMBER_BINARY... MODEL (stories260K.ember; the binary may be
# preceded by an emulator)
set -uo pipefail
args=("$@")
model="${args[-1]}"
unset 'args[-1]'
ember=("${args[@]}")
source "$(dirname "$0")/cli_expect.sh"

printf 'root ::= "Once" (" " [a-z]+){1,3} "."\n' >"$tmp/words.gbnf"
expect 0 "grammar $tmp/words.gbnf: 224464 bytes of the session's arena (program 416" -- \
  "${ember[@]}" run -m "$model" -p "Once" --grammar "$tmp/words.gbnf" --temp 0 -n 40
text=$(tail -c +5 "$tmp/stdout" | head -n 1)  # after the prompt's echo
expect 0 complete -- "${ember[@]}" grammar -g "$tmp/words.gbnf" --text "$text"

# The grammar lives in the session's arena: inspect tells its bytes against the planned
# buffer; a session planned with less (or none) refuses it naming the bytes, not a crash.
# Planned exactly when a grammar is given, not at all otherwise.
expect 0 "total              224464 bytes  of 224464 planned" -- "${ember[@]}" inspect \
  -m "$model" --grammar "$tmp/words.gbnf"
expect 0 "grammar                 0            0  grammar" -- "${ember[@]}" inspect \
  -m "$model" -c 16
expect 1 "needs 224464 bytes of the session's arena, 224000 are planned" -- \
  "${ember[@]}" inspect -m "$model" --grammar "$tmp/words.gbnf" --grammar-bytes 224000
expect 1 "needs 224464 bytes of the session's arena (program 416, matcher 217088" -- \
  "${ember[@]}" run -m "$model" -p "Once" --grammar "$tmp/words.gbnf" --grammar-bytes 224000
expect 1 "the session planned 0" -- "${ember[@]}" run -m "$model" -p "Once" \
  --grammar "$tmp/words.gbnf" --grammar-bytes none
expect 0 "Once" -- "${ember[@]}" run -m "$model" -p "Once" --grammar "$tmp/words.gbnf" \
  --grammar-bytes 224464 --temp 0 -n 40
expect 1 "--grammar-bytes -3: not a positive number" -- "${ember[@]}" run -m "$model" \
  -p "Once" --grammar "$tmp/words.gbnf" --grammar-bytes -3

# Sampled, with several seeds: each text is whole, or status 1 says it is not.
for seed in 1 2 3; do
  "${ember[@]}" run -m "$model" -p "Once" --grammar "$tmp/words.gbnf" --seed "$seed" \
    -n 40 >"$tmp/out" 2>"$tmp/err"
  status=$?
  text=$(tail -c +5 "$tmp/out")
  text=${text%$'\n'}
  verdict=$("${ember[@]}" grammar -g "$tmp/words.gbnf" --text "$text")
  if [ "$status" = 0 ] && [ "$verdict" != complete ]; then
    fail "seed $seed: status 0 but '$text' is $verdict"
  elif [ "$status" != 0 ] && [ "$verdict" != prefix ]; then
    fail "seed $seed: status $status but '$text' is $verdict: $(cat "$tmp/err")"
  else
    echo "ok: seed $seed: '$text' $verdict (status $status)"
  fi
done

expect 0 "grammar --json" -- "${ember[@]}" run -m "$model" -p "Once" --json --temp 0 -n 60
expect 1 "in the middle of the grammar's text (-n reached)" -- "${ember[@]}" run \
  -m "$model" -p "Once" --grammar "$tmp/words.gbnf" --temp 0 -n 1
expect 1 "in the middle of the grammar's text (the context is full)" -- "${ember[@]}" run \
  -m "$model" -p "Once" --grammar "$tmp/words.gbnf" --temp 0 -c 4

# A JSON Schema: the text fills it (checked by `ember grammar --json-schema --text`).
cat >"$tmp/schema.json" <<'JSON'
{"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
 "age": {"type": "integer", "minimum": 1, "maximum": 99}}, "required": ["name", "age"]}
JSON
expect 0 "grammar $tmp/schema.json" -- "${ember[@]}" run -m "$model" -p "Once" \
  --json-schema "$tmp/schema.json" --temp 0 -n 400
text=$(tail -c +5 "$tmp/stdout")
text=${text%$'\n'}
expect 0 complete -- "${ember[@]}" grammar --json-schema "$tmp/schema.json" --text "$text"
printf '{"type": "string", "pattern": "a+"}' >"$tmp/pattern.json"
expect 1 "keyword 'pattern' is not supported" -- "${ember[@]}" run -m "$model" \
  --json-schema "$tmp/pattern.json"

printf 'root ::= "a" (\n' >"$tmp/bad.gbnf"
expect 1 "$tmp/bad.gbnf: " -- "${ember[@]}" run -m "$model" --grammar "$tmp/bad.gbnf"
expect 1 "--grammar, --json-schema and --json: use one" -- "${ember[@]}" run -m "$model" --json \
  --grammar "$tmp/words.gbnf"
expect 1 "cannot" -- "${ember[@]}" run -m "$model" --grammar "$tmp/missing.gbnf"

# Tools: the grammar of a call in each family's syntax, arguments held to the schema.
cat >"$tmp/tools.json" <<'EOF'
[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
  "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
  "required": ["city"]}}},
 {"name": "now"}]
EOF
expect 0 'get_weather' -- "${ember[@]}" grammar --tools "$tmp/tools.json"
expect 0 complete -- "${ember[@]}" grammar --tools "$tmp/tools.json" --text \
  $'\n{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}'
expect 0 complete -- "${ember[@]}" grammar --tools "$tmp/tools.json" --text \
  '{"name": "now", "arguments": {}}'
expect 0 reject -- "${ember[@]}" grammar --tools "$tmp/tools.json" --text \
  '{"name": "get_weather", "arguments": {"unit": "c"}}'  # city is required
expect 0 reject -- "${ember[@]}" grammar --tools "$tmp/tools.json" --text \
  '{"name": "other", "arguments": {}}'
expect 0 complete -- "${ember[@]}" grammar --tools "$tmp/tools.json" --tool-format llama3 \
  --text '{"name": "get_weather", "parameters": {"city": "Oslo"}}'
expect 0 complete -- "${ember[@]}" grammar --tools "$tmp/tools.json" --tool-format mistral \
  --text '[{"name": "now", "arguments": {}}, {"name": "get_weather", "arguments": {"city": ""}}]'
expect 0 complete -- "${ember[@]}" grammar --tools "$tmp/tools.json" --tool-format phi4-mini \
  --text '[{"name": "get_weather", "arguments": {"city": "Oslo"}}]'
expect 0 reject -- "${ember[@]}" grammar --tools "$tmp/tools.json" --tool-format phi4-mini \
  --text '[{"name": "get_weather", "parameters": {"city": "Oslo"}}]'
expect 1 "hermes, llama3, mistral or phi4-mini" -- "${ember[@]}" grammar \
  --tools "$tmp/tools.json" --tool-format xml
printf '{"name": "f"}' >"$tmp/not_list.json"
expect 1 "a list of tools" -- "${ember[@]}" grammar --tools "$tmp/not_list.json"
printf '[{"name": "f"}, {"name": "f"}]' >"$tmp/twice.json"
expect 1 'two tools are named "f"' -- "${ember[@]}" grammar --tools "$tmp/twice.json"
printf '[{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}}]' \
  >"$tmp/pattern_tool.json"
expect 1 "keyword 'pattern' is not supported" -- "${ember[@]}" grammar --tools \
  "$tmp/pattern_tool.json"
python3 -c 'print("[" * 100000 + "]" * 100000)' >"$tmp/deep.json"
expect 1 "nested deeper" -- "${ember[@]}" grammar --tools "$tmp/deep.json"
[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all grammar CLI checks passed"
