#!/usr/bin/env bash
# The chat command lines on stories260K: `ember convert --chat-template` (and templates
# it refuses, naming the construct and line or the budget), `ember template` printing
# the rendered conversation exactly, `ember chat` through a pipe (replies, the cache
# reused, per-turn speeds, /reset, /exit, a full context, --kv-type, --context-shift),
# `ember run`'s stop strings and penalties, and a vision model's chat with images.
# usage: chat_cli_test.sh EMBER_BINARY MODELS_DIR SOURCE_DIR
set -uo pipefail
ember="$1"
models="$2"
src="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
source "$(dirname "$0")/cli_expect.sh"

bin="$models/llama2c/stories260K/stories260K.bin"
tok="$models/llama2c/stories260K/tok512.bin"
skip_without "$bin" "$tok"
template="$src/tests/chat_templates/stories.jinja"
model="$tmp/chat.ember"
expect 0 "chat template compiled" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" \
  --chat-template "$template" -o "$model"
expect 0 "wrote" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" -o "$tmp/plain.ember"

# Templates the runtime cannot run are refused at conversion, naming what and where.
printf '{%% for m in messages %%}\n{{ m.content | wordwrap(10) }}{%% endfor %%}' >"$tmp/bad1.jinja"
expect 1 "line 2, column 16: filter 'wordwrap' is not supported" -- "$ember" convert \
  --llama2c "$bin" --tokenizer "$tok" --chat-template "$tmp/bad1.jinja" -o "$tmp/x.ember"
printf 'a\n\n{%% macro f() %%}x{%% endmacro %%}' >"$tmp/bad2.jinja"
expect 1 "line 3, column 4: {% macro %} is not supported" -- "$ember" convert \
  --llama2c "$bin" --tokenizer "$tok" --chat-template "$tmp/bad2.jinja" -o "$tmp/x.ember"
printf '{{ messages | length' >"$tmp/bad3.jinja"
expect 1 "unclosed tag" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" \
  --chat-template "$tmp/bad3.jinja" -o "$tmp/x.ember"
# So is one that outgrows the buffer a chat gives even a short conversation (it once took
# a minute and gigabytes, then stored a template no chat could render).
printf '{{ messages | tojson(indent=1000000000) }}' >"$tmp/huge.jinja"
expect 1 "does not render: the buffer of 17000 bytes is too small" -- "$ember" convert \
  --llama2c "$bin" --tokenizer "$tok" --chat-template "$tmp/huge.jinja" -o "$tmp/x.ember"
[ -e "$tmp/x.ember" ] && fail "a refused template still wrote a model"

# ember template prints the conversation exactly (no newline added).
cat >"$tmp/conv.json" <<'EOF'
[{"role": "system", "content": "You tell stories."},
 {"role": "user", "content": " Hello "},
 {"role": "assistant", "content": " Hi."},
 {"role": "user", "content": "A story?"}]
EOF
expect 0 "" -- "$ember" template -m "$model" --messages "$tmp/conv.json"
printf '\n<s>\nYou tell stories.\n\nUser: Hello\nBot: Hi.\n</s>\n\nUser: A story?\nBot:' >"$tmp/want"
cmp -s "$tmp/stdout" "$tmp/want" || fail "template: $(od -c "$tmp/stdout" | head -5)"
expect 0 "" -- "$ember" template -m "$model" --messages "$tmp/conv.json" --no-generation-prompt
printf '\n<s>\nYou tell stories.\n\nUser: Hello\nBot: Hi.\n</s>\n\nUser: A story?\n' >"$tmp/want"
cmp -s "$tmp/stdout" "$tmp/want" || fail "template without the generation prompt: $(od -c "$tmp/stdout" | head -5)"
echo '[{"role": "narrator", "content": "x"}]' >"$tmp/bad_role.json"
expect 1 "Unknown role: narrator" -- "$ember" template -m "$model" --messages "$tmp/bad_role.json"
echo '[{"role": "user"}]' >"$tmp/no_content.json"
expect 1 'message 0 has no "content" (null for none)' -- "$ember" template -m "$model" \
  --messages "$tmp/no_content.json"
expect 1 "has no compiled chat template" -- "$ember" template -m "$tmp/plain.ember" \
  --messages "$tmp/conv.json"
expect 1 "give either -m MODEL or --tokenizer DIR" -- "$ember" template --messages "$tmp/conv.json"

# ember chat through a pipe: a reply per line, the second turn reusing the first's cache,
# speeds on stderr, /reset, /exit (the turn after it is never answered).
printf 'Hello there\nTell me about the dog\n/reset\nOnce more\n/exit\nNever answered\n' |
  "$ember" chat -m "$model" --system "You tell short stories." -n 16 --temp 0 \
  >"$tmp/chat.out" 2>"$tmp/chat.err"
status=$?
[ "$status" = 0 ] || fail "chat exited $status: $(cat "$tmp/chat.err")"
[ "$(grep -c '^ember chat: prefill' "$tmp/chat.err")" = 3 ] ||
  fail "chat: want 3 turns' speeds on stderr: $(cat "$tmp/chat.err")"
grep -qE "^ember chat: prefill [0-9]+ of [0-9]+ tokens \(0 cached\)" "$tmp/chat.err" ||
  fail "chat: the first turn should prefill everything"
[ "$(grep -cE '\([1-9][0-9]* cached\).*tok/s\); generated [0-9]+ tokens, [0-9.]+ tok/s' "$tmp/chat.err")" = 2 ] ||
  fail "chat: turns 2 and 3 should reuse the cache: $(cat "$tmp/chat.err")"
grep -q "conversation reset" "$tmp/chat.err" || fail "chat: /reset said nothing"
[ "$(grep -c . "$tmp/chat.out")" -ge 3 ] || fail "chat: replies: $(cat "$tmp/chat.out")"
# Under a grammar: every reply is a sentence of it (each line checked by ember grammar),
# or status 1 says one was cut off.
printf 'root ::= "The" (" " [a-z]+){1,4} "."\n' >"$tmp/words.gbnf"
printf 'Hello there\nTell me about the dog\n' |
  "$ember" chat -m "$model" --system "You tell short stories." -n 40 --temp 0 \
  --grammar "$tmp/words.gbnf" >"$tmp/gchat.out" 2>"$tmp/gchat.err"
status=$?
[ "$status" = 0 ] || fail "chat --grammar exited $status: $(cat "$tmp/gchat.err")"
[ "$(grep -c . "$tmp/gchat.out")" = 2 ] || fail "chat --grammar: $(cat "$tmp/gchat.out")"
while IFS= read -r reply; do
  verdict=$("$ember" grammar -g "$tmp/words.gbnf" --text "$reply")
  [ "$verdict" = complete ] || fail "chat --grammar: reply '$reply' is $verdict"
done <"$tmp/gchat.out"
printf 'Hello there\n' | "$ember" chat -m "$model" -n 2 --temp 0 \
  --grammar "$tmp/words.gbnf" >/dev/null 2>"$tmp/gcut.err"
status=$?
{ [ "$status" = 1 ] && grep -q "stopped before the grammar's text was whole" "$tmp/gcut.err"; } ||
  fail "chat --grammar -n 2: status $status, $(cat "$tmp/gcut.err")"

# The same conversation replayed gives the same greedy replies.
printf 'Hello there\nTell me about the dog\n/reset\nOnce more\n' |
  "$ember" chat -m "$model" --system "You tell short stories." -n 16 --temp 0 \
  >"$tmp/chat2.out" 2>/dev/null
cmp -s "$tmp/chat.out" "$tmp/chat2.out" || fail "chat: a replay differs"
# The rendered conversation is tokenized with special-token parsing and no BOS added:
# the template's bos_token and eos_token (llama2.c's "\n<s>\n", "\n</s>\n") become ids 1
# and 2, registered as special tokens at conversion (text elsewhere is never matched).
printf 'Hello there\nTell me about the dog\n' |
  "$ember" chat -m "$model" --system "You tell short stories." -n 16 --temp 0 \
  --verbose-prompt >/dev/null 2>"$tmp/verbose.err"
prompts=$(grep '^ember chat: prompt tokens:' "$tmp/verbose.err" | cut -d: -f3)
[ "$(wc -l <<<"$prompts")" = 2 ] || fail "chat --verbose-prompt: $(cat "$tmp/verbose.err")"
first=$(head -1 <<<"$prompts") second=$(tail -1 <<<"$prompts")
[[ "$first" == " 1 "* && "$(tr ' ' '\n' <<<"$first" | grep -cx 1)" = 1 ]] ||
  fail "turn 1 does not start with one BOS: $first"
[[ "$second" == "$first"* && "$second" == *" 2 "* ]] || fail "turn 2 lacks turn 1 or EOS: $second"
expect 0 "1 1 320 417 2" -- "$ember" tokenize -m "$model" -p $'\n<s>\nHi\n</s>\n' --parse-special
expect 0 "1 410 13 504" -- "$ember" tokenize -m "$model" -p $'\n<s>\nHi\n</s>\n'

# A full context: the oldest turns go, with a message.
for i in $(seq 1 12); do echo "Tell me more about the little dog and the big cat $i"; done |
  "$ember" chat -m "$model" -c 96 -n 12 --temp 0 >"$tmp/full.out" 2>"$tmp/full.err"
[ $? = 0 ] || fail "chat with a small context failed: $(tail -3 "$tmp/full.err")"
grep -q "context full: dropped the" "$tmp/full.err" ||
  fail "chat: a full context dropped nothing: $(tail -3 "$tmp/full.err")"

# --kv-type and --context-shift/--keep, as run has them: a q8 cache chats (the second
# turn reusing the first's cache); a reply longer than the context shifts it with a
# message and goes on, and the next turn prefills again from where the cache differs.
printf 'Hello there\nTell me about the dog\n' |
  "$ember" chat -m "$model" -n 16 --temp 0 --kv-type q8 >"$tmp/q8.out" 2>"$tmp/q8.err"
[ $? = 0 ] || fail "chat --kv-type q8 failed: $(tail -3 "$tmp/q8.err")"
grep -q "q8 KV cache" "$tmp/q8.err" || fail "chat --kv-type q8: $(cat "$tmp/q8.err")"
[ "$(grep -cE '\([1-9][0-9]* cached\)' "$tmp/q8.err")" = 1 ] ||
  fail "chat --kv-type q8: turn 2 should reuse the cache: $(cat "$tmp/q8.err")"
printf 'Tell me a story\nAnd then\n' |
  "$ember" chat -m "$model" -c 64 -n 120 --temp 0 --context-shift --keep 8 \
  >"$tmp/shift.out" 2>"$tmp/shift.err"
[ $? = 0 ] || fail "chat --context-shift failed: $(tail -3 "$tmp/shift.err")"
grep -q "context full: shifted" "$tmp/shift.err" ||
  fail "chat --context-shift: no shift: $(cat "$tmp/shift.err")"
grep -q "the reply is cut" "$tmp/shift.err" && fail "chat --context-shift cut a reply"
[ "$(grep -c '^ember chat: prefill' "$tmp/shift.err")" = 2 ] ||
  fail "chat --context-shift: want 2 turns: $(cat "$tmp/shift.err")"
printf 'Tell me a story\n' | "$ember" chat -m "$model" -c 64 -n 120 --temp 0 \
  >/dev/null 2>"$tmp/cut.err"
grep -q "the reply is cut" "$tmp/cut.err" ||
  fail "chat without --context-shift: the reply should be cut: $(cat "$tmp/cut.err")"
expect 1 "--keep is for --context-shift" -- "$ember" chat -m "$model" --keep 4
expect 1 "--kv-type q4: not f32, f16 or q8" -- "$ember" chat -m "$model" --kv-type q4
expect 1 "has no compiled chat template" -- "$ember" chat -m "$tmp/plain.ember"
expect 1 "--min-p: 2 is outside" -- "$ember" chat -m "$model" --min-p 2
# A line the chat cannot take (longer than the text it keeps, not UTF-8, wider than the
# context) is refused with a message and the session goes on with the turns before it
# (the last turn finds them in the cache); the exit status says turns were refused.
{
  echo "Hello there"
  head -c 2000 /dev/zero | tr '\0' 'a'
  echo
  printf 'bad \xff line\n'
  for i in $(seq 1 60); do printf 'a b '; done
  echo
  echo "Tell me about the dog"
} | "$ember" chat -m "$model" -c 64 -n 8 --temp 0 >"$tmp/refused.out" 2>"$tmp/refused.err"
status=$?
[ "$status" = 1 ] || fail "chat with refused turns exited $status"
for fragment in "keeps 256 messages and 512 bytes of text: this one does not fit" \
  "the line is not valid UTF-8 (byte 4 of 10)" "does not fit the context of 64" \
  "3 of 5 turns were refused"; do
  grep -qF "$fragment" "$tmp/refused.err" || fail "chat: no '$fragment': $(cat "$tmp/refused.err")"
done
[ "$(grep -c '^ember chat: turn refused (the conversation goes on without it)' "$tmp/refused.err")" = 3 ] ||
  fail "chat: want 3 refused turns: $(cat "$tmp/refused.err")"
[ "$(grep -c '^ember chat: prefill' "$tmp/refused.err")" = 2 ] ||
  fail "chat: want 2 replies: $(cat "$tmp/refused.err")"
tail -2 "$tmp/refused.err" | grep -qE '^ember chat: prefill [0-9]+ of [0-9]+ tokens \([1-9][0-9]* cached\)' ||
  fail "chat: the turn after the refused ones lost the conversation: $(cat "$tmp/refused.err")"
grep -q "dropped" "$tmp/refused.err" && fail "chat: a refused turn dropped the older ones"

# A template's text (a raise_exception message here) reaches the terminal escaped: no
# escape sequence from a model file is obeyed (retitle, clear the screen).
printf '{{ raise_exception("\033]0;pwned\007\033[2J") }}' >"$tmp/evil.jinja"
expect 0 "chat template compiled" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" \
  --chat-template "$tmp/evil.jinja" -o "$tmp/evil.ember"
expect 1 '\x1B]0;pwned\x07\x1B[2J' -- "$ember" template -m "$tmp/evil.ember" \
  --messages "$tmp/conv.json"
echo "Hello" | "$ember" chat -m "$tmp/evil.ember" >/dev/null 2>"$tmp/evil.err"
grep -qF 'turn refused (the conversation goes on without it): chat template: \x1B]0;pwned\x07\x1B[2J' "$tmp/evil.err" ||
  fail "chat: the template's refusal: $(od -c "$tmp/evil.err" | head -5)"
for f in "$tmp/evil.err" "$tmp/refused.err"; do
  grep -q $'[\x07\x1b]' "$f" && fail "$f holds a raw control character: $(od -c "$f" | head -5)"
done

# ember run: a stop string ends the text before it (greedy: "... there was a little girl").
expect 0 "generated" -- "$ember" run -m "$model" -p "Once upon a time" --temp 0 -n 40 \
  --stop "little"
grep -q "there was a $" "$tmp/stdout" || grep -q "there was a$" "$tmp/stdout" ||
  fail "run --stop little printed: $(cat "$tmp/stdout")"
grep -q "little" "$tmp/stdout" && fail "run --stop little printed the stop string"
expect 0 "generated" -- "$ember" run -m "$model" -p "Once upon a time" --temp 0 -n 40 \
  --repeat-penalty 1.3 --frequency-penalty 0.2 --presence-penalty 0.2 --min-p 0.05
expect 1 "--stop: stop string 0 is empty" -- "$ember" run -m "$model" --stop ""
expect 1 "--repeat-last-n: -2 is outside" -- "$ember" run -m "$model" --repeat-last-n -2

# A prompt cache: the second run reuses the first's prompt, and prints the same text.
prompt="Once upon a time, there was a little girl named Lily. She liked to play."
expect 0 "prompt cache: 0 of" -- "$ember" run -m "$model" -p "$prompt" -n 12 --temp 0 \
  --prompt-cache "$tmp/cache.state"
cp "$tmp/stdout" "$tmp/cached1"
expect 0 "prompt cache: 21 of 22 prompt tokens reused" -- "$ember" run -m "$model" \
  -p "$prompt" -n 12 --temp 0 --prompt-cache "$tmp/cache.state"
cmp -s "$tmp/stdout" "$tmp/cached1" || fail "a run from the prompt cache printed other text"
expect 0 "wrote" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" --dtype q8 \
  -o "$tmp/q8.ember"
expect 0 "not used: the prompt state was saved from another model" -- "$ember" run \
  -m "$tmp/q8.ember" -p "x" -n 2 --prompt-cache "$tmp/cache.state"
# A file that is not a prompt state is refused, never replaced: text, the model itself
# (under its name, a symbolic link or a hard link: the same device and inode). An empty
# file holds nothing and becomes a cache.
head -c 300 "$tmp/cached1" >"$tmp/junk.state"
cp "$tmp/junk.state" "$tmp/junk.copy"
expect 1 "refusing to replace '$tmp/junk.state' with a prompt cache: it is not an ember prompt state" \
  -- "$ember" run -m "$model" -p "x" -n 2 --prompt-cache "$tmp/junk.state"
cmp -s "$tmp/junk.state" "$tmp/junk.copy" || fail "--prompt-cache replaced a text file"
cp "$model" "$tmp/model.copy"
ln -s "$model" "$tmp/model.link"
ln "$model" "$tmp/model.hard"
for cache in "$model" "$tmp/model.link" "$tmp/model.hard"; do
  expect 1 "is the model '$model'" -- "$ember" run -m "$model" -p "x" -n 2 \
    --prompt-cache "$cache"
done
expect 1 "it is not an ember prompt state" -- "$ember" run -m "$model" -p "x" -n 2 \
  --prompt-cache "$tmp/plain.ember"
cmp -s "$model" "$tmp/model.copy" || fail "--prompt-cache replaced the model it ran"
expect 1 "not a regular file" -- "$ember" run -m "$model" -p "x" -n 2 --prompt-cache "$tmp"
: >"$tmp/empty.state"
expect 0 "prompt cache: 0 of" -- "$ember" run -m "$model" -p "$prompt" -n 2 \
  --prompt-cache "$tmp/empty.state"
expect 0 "prompt cache: 21 of 22 prompt tokens reused" -- "$ember" run -m "$model" \
  -p "$prompt" -n 2 --prompt-cache "$tmp/empty.state"

# A baked prompt: the same greedy text as a prefilled one, with no prefill.
expect 0 "baked a prompt of 16 tokens" -- "$ember" bake -m "$model" -p "${prompt% She liked to play.}" \
  -o "$tmp/baked.ember"
expect 0 "baked prompt of 16 tokens restored" -- "$ember" run -m "$tmp/baked.ember" -n 12 --temp 0
cp "$tmp/stdout" "$tmp/baked_out"
expect 0 "generated 12 tokens" -- "$ember" run -m "$model" -p "${prompt% She liked to play.}" \
  -n 12 --temp 0
cmp -s "$tmp/stdout" "$tmp/baked_out" || fail "baked: $(cat "$tmp/baked_out") vs $(cat "$tmp/stdout")"
expect 1 "give either -p TEXT or --chat-system TEXT" -- "$ember" bake -m "$model" -o "$tmp/x.ember"
expect 1 "is the model" -- "$ember" bake -m "$model" -p "x" -o "$model"
expect 1 "--prompt-cache and a model with a baked prompt" -- "$ember" run -m "$tmp/baked.ember" \
  --prompt-cache "$tmp/cache.state"
# A chat whose system text is baked finds it in the cache on its first turn.
expect 0 "baked a prompt of" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" \
  --chat-template "$template" --bake-chat-system "You tell short stories." -o "$tmp/chat_baked.ember"
echo "Hello there" | "$ember" chat -m "$tmp/chat_baked.ember" --system "You tell short stories." \
  -n 8 --temp 0 >/dev/null 2>"$tmp/baked_chat.err"
grep -qE "prefill [0-9]+ of [0-9]+ tokens \([1-9][0-9]* cached\)" "$tmp/baked_chat.err" ||
  fail "a chat over a baked system text reused nothing: $(cat "$tmp/baked_chat.err")"

# --tools: a template that shows Hermes calls (<tool_call> tags) and renders the tools;
# stories260K never opens a call, so replies stay free text; /tool answers.
printf '{%% if tools %%}tools:{%% for t in tools %%} {{ t.function.name }}{%% endfor %%} <tool_call>\n{%% endif %%}{%% for m in messages %%}{{ m.role }}: {{ m.content }}\n{%% endfor %%}{%% if add_generation_prompt %%}assistant:{%% endif %%}' \
  >"$tmp/tools.jinja"
expect 0 "chat template compiled" -- "$ember" convert --llama2c "$bin" --tokenizer "$tok" \
  --chat-template "$tmp/tools.jinja" -o "$tmp/tools.ember"
printf '[{"type": "function", "function": {"name": "get_time"}}, {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}]' \
  >"$tmp/tools.json"
printf 'Once upon a time\n/tool 12:00\n' >"$tmp/tool_turns"
expect 0 "2 tools; calls in the hermes" -- "$ember" chat -m "$tmp/tools.ember" \
  --tools "$tmp/tools.json" -n 8 --temp 0 --verbose-prompt <"$tmp/tool_turns"
"$ember" chat -m "$tmp/tools.ember" --tools "$tmp/tools.json" -n 8 --temp 0 \
  <"$tmp/tool_turns" >/dev/null 2>"$tmp/tool_err"
grep -c "ember chat: prefill" "$tmp/tool_err" | grep -qx 2 ||
  fail "two replies expected (the user turn and the tool turn): $(cat "$tmp/tool_err")"
expect 1 "shows no tool-call syntax" -- "$ember" chat -m "$model" --tools "$tmp/tools.json" \
  </dev/null
expect 1 "--tools constrains the calls" -- "$ember" chat -m "$tmp/tools.ember" \
  --tools "$tmp/tools.json" --json </dev/null

# Images (a tiny synthetic vision model with a chat template): --image for the first
# turn, /image FILE for a later one; the turns after an image reuse its cached rows. A
# grammar keeps the random model's replies to letters (valid UTF-8 for the next render).
vision="$tmp/vision.ember"
printf '{%% for m in messages %%}[{{ m.role }}] {{ m.content }}\n{%% endfor %%}{%% if add_generation_prompt %%}[assistant]{%% endif %%}' \
  >"$tmp/vision.jinja"
expect 0 "wrote" -- "$ember" convert --synthetic custom --dim 64 --hidden 128 --layers 2 \
  --heads 4 --kv-heads 2 --vocab 512 --ctx 256 --seed 7 --vision tiny \
  --chat-template "$tmp/vision.jinja" -o "$vision"
/usr/bin/python3 -c "
import sys; from PIL import Image
Image.new('RGB', (40, 30), (200, 40, 90)).save(sys.argv[1])
Image.new('RGB', (20, 50), (10, 140, 90)).save(sys.argv[2])" "$tmp/red.png" "$tmp/green.png" ||
  fail "writing PNGs with Pillow"
echo 'root ::= [a-z]+' >"$tmp/letters.gbnf"
printf 'What is it?\n/image %s\nAnd <start_of_image> here?\nThanks.\n' "$tmp/green.png" \
  >"$tmp/image_turns"
"$ember" chat -m "$vision" --image "$tmp/red.png" --grammar "$tmp/letters.gbnf" -n 4 \
  --temp 0 --verbose-prompt <"$tmp/image_turns" >"$tmp/stdout" 2>"$tmp/stderr" ||
  fail "chat --image: $(cat "$tmp/stderr")"
grep -q "red.png: 1 tile, 4 rows encoded" "$tmp/stderr" || fail "--image: $(cat "$tmp/stderr")"
grep -q "green.png: 1 tile, 4 rows encoded" "$tmp/stderr" || fail "/image: $(cat "$tmp/stderr")"
grep "images\? in the conversation" "$tmp/stderr" >"$tmp/image_lines"
printf '%s\n' "ember chat: 1 image in the conversation, 1 prefilled now" \
  "ember chat: 2 images in the conversation, 1 prefilled now" \
  "ember chat: 2 images in the conversation, 0 prefilled now" >"$tmp/want"
cmp -s "$tmp/image_lines" "$tmp/want" || fail "chat images: $(cat "$tmp/stderr")"
# The first turn's prompt: its image's "\n\n<start_of_image>", 4 image tokens (511) and
# "<end_of_image>\n\n" before the text.
grep -q "prompt tokens: .* 13 13 509 511 511 511 511 510 " "$tmp/stderr" ||
  fail "chat image prompt: $(grep 'prompt tokens' "$tmp/stderr" | head -1)"
# Refused: markers that are not the images' (the conversation goes on), an image for a
# text-only model, a file that is not an image.
printf '<start_of_image> and <start_of_image>\n' >"$tmp/two_markers"
expect 1 "the turn has 2 image markers ('<start_of_image>') for 1 image" -- "$ember" chat \
  -m "$vision" --image "$tmp/red.png" --grammar "$tmp/letters.gbnf" -n 2 <"$tmp/two_markers"
expect 1 "--image: the model has no vision tower" -- "$ember" chat -m "$model" \
  --image "$tmp/red.png" </dev/null
echo "not an image" >"$tmp/not.png"
printf '/image %s\nHi\n' "$tmp/not.png" >"$tmp/bad_image"
expect 1 "not.png: " -- "$ember" chat -m "$vision" --grammar "$tmp/letters.gbnf" -n 2 \
  <"$tmp/bad_image"

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all chat CLI checks passed"
