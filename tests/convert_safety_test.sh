#!/usr/bin/env bash
# Writing files never destroys data: ember convert refuses an -o that is one of its
# inputs (the checkpoint, the tokenizer, the GGUF file, a file of the --hf directory;
# also through a symbolic or hard link), logits and attn refuse an output that is the
# model, and convert refuses, with the loader's message and without writing, a model the
# loader would reject (a corrupted <0xNN> piece, a BOS id on a byte piece of byte-level
# BPE, a 100,000-byte piece, rope_theta 1). Every refusal exits with status 1, leaves the
# inputs and any older output byte for byte as they were, and leaves no temporary file.
# usage: convert_safety_test.sh EMBER_BINARY MODELS_DIR
set -uo pipefail
ember="$1"
models="${EMBER_MODELS:-$2}"
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

bin="$models/llama2c/stories260K/stories260K.bin"
tok="$models/llama2c/stories260K/tok512.bin"
if [ ! -f "$bin" ]; then
  if [ "${EMBER_REQUIRE_MODELS:-0}" = 1 ]; then echo "FAIL: $bin missing"; exit 1; fi
  echo "SKIP: $bin missing"; exit 0
fi

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS MESSAGE_FRAGMENT -- command...
expect() {
  local want_status="$1" fragment="$2"
  shift 3
  local out status shown="$*"
  out=$("$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" != "$want_status" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    fail "${shown:0:200} -> status $status (want $want_status)," \
      "stderr: $(tail -c 400 <<<"$out") (want '$fragment')"
  else
    echo "ok: ${shown:0:160} -> $status: $(tail -n 1 <<<"$out" | head -c 200)"
  fi
}

# same FILE COPY: FILE is still byte for byte COPY.
same() {
  cmp -s "$1" "$2" || fail "$1 changed"
}

# no_temporaries DIR: no temporary file (NAME.tmp-XXXXXX) was left in DIR.
no_temporaries() {
  local left
  left=$(find "$1" -name '*.tmp-*')
  [ -z "$left" ] || fail "temporary files left: $left"
}

# Inputs in a directory of their own, with pristine copies to compare against.
mkdir "$tmp/in" "$tmp/orig"
cp "$bin" "$tmp/in/model.bin"
cp "$tok" "$tmp/in/tok.bin"
cp "$bin" "$tok" "$tmp/orig/"
ln -s model.bin "$tmp/in/model.link"
ln "$tmp/in/tok.bin" "$tmp/in/tok.hardlink"
ckpt="$tmp/in/model.bin"
tokin="$tmp/in/tok.bin"
convert=("$ember" convert --llama2c "$ckpt" --tokenizer "$tokin")

# --- An output that is an input is refused: llama2.c ---
expect 1 "refusing to write '$ckpt': it is the checkpoint '$ckpt'" -- \
  "${convert[@]}" -o "$ckpt"
expect 1 "refusing to write '$tokin': it is the tokenizer '$tokin'" -- \
  "${convert[@]}" -o "$tokin"
expect 1 "it is the checkpoint '$ckpt' (the same file under another name)" -- \
  "${convert[@]}" -o "$tmp/in/model.link"
expect 1 "it is the tokenizer '$tokin' (the same file under another name)" -- \
  "${convert[@]}" -o "$tmp/in/tok.hardlink"
expect 1 "it is the checkpoint" -- "${convert[@]}" -o "$tmp/in/../in/./model.bin"
same "$ckpt" "$tmp/orig/stories260K.bin"
same "$tokin" "$tmp/orig/tok512.bin"
[ -L "$tmp/in/model.link" ] || fail "the symbolic link was replaced"
no_temporaries "$tmp/in"

# --- ... and GGUF ---
cp "$models/gguf/stories260K.gguf" "$tmp/in/model.gguf"
ln -s model.gguf "$tmp/in/gguf.link"
gguf="$tmp/in/model.gguf"
expect 1 "refusing to write '$gguf': it is the GGUF file '$gguf'" -- \
  "$ember" convert --gguf "$gguf" -o "$gguf"
expect 1 "it is the GGUF file '$gguf' (the same file under another name)" -- \
  "$ember" convert --gguf "$gguf" -o "$tmp/in/gguf.link"
same "$gguf" "$models/gguf/stories260K.gguf"
[ -L "$tmp/in/gguf.link" ] || fail "the symbolic link to the GGUF file was replaced"
no_temporaries "$tmp/in"

# A good conversion, then one over it: the output is replaced, nothing is left behind.
model="$tmp/out/stories260K.ember"
mkdir "$tmp/out"
expect 0 "wrote $model" -- "${convert[@]}" -o "$model"
expect 0 "wrote $model" -- "${convert[@]}" --dtype q8 -o "$model"
# (Into a file first: grep -q may exit before inspect has written, and pipefail would
# count inspect's broken pipe.)
"$ember" inspect -m "$model" >"$tmp/inspect.txt" 2>&1
grep -q "q8" "$tmp/inspect.txt" ||
  fail "the second conversion did not replace the first"
cp "$model" "$tmp/orig/model.ember"
no_temporaries "$tmp/out"

# --- logits and attn never write over the model ---
expect 1 "refusing to write '$model': it is the model '$model'" -- \
  "$ember" logits -m "$model" --tokens 1,2 -o "$model"
expect 1 "it is the model '$model'" -- \
  "$ember" logits -m "$model" --tokens 1,2 -o "$tmp/out/l.npy" --attn "$model"
expect 1 "-o and --attn are both" -- \
  "$ember" logits -m "$model" --tokens 1,2 -o "$tmp/out/l.npy" --attn "$tmp/out/l.npy"
ln -s stories260K.ember "$tmp/out/model.link"
expect 1 "it is the model '$model' (the same file under another name)" -- \
  "$ember" attn -m "$model" --tokens 1,2 -o "$tmp/out/model.link"
same "$model" "$tmp/orig/model.ember"
expect 0 "wrote" -- "$ember" logits -m "$model" --tokens 1,2 -o "$tmp/out/l.npy"
expect 0 "wrote" -- "$ember" attn -m "$model" --tokens 1,2 -o "$tmp/out/a.svg"
expect 0 "wrote /dev/null" -- "$ember" attn -m "$model" --tokens 1,2 -o /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"
no_temporaries "$tmp/out"

# --- Hugging Face directories, written here (tiny GPT-2 and Llama, byte-level BPE) ---
# make_hf DIR gpt2|llama [KEY=JSON ...]: config.json keys override the defaults;
# long_piece=N makes piece 256 N bytes long.
make_hf() {
  "$python" - "$@" <<'EOF'
import json, os, struct, sys
d, kind = sys.argv[1], sys.argv[2]
extra = dict(a.split("=", 1) for a in sys.argv[3:])
os.makedirs(d, exist_ok=True)
V = 258
# GPT-2's byte-to-unicode table: printable bytes stand for themselves.
bs = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255]
cs = bs[:]
for b in range(256):
    if b not in bs:
        bs.append(b)
        cs.append(256 + len(cs) - 188)
b2u = {b: chr(c) for b, c in zip(bs, cs)}
vocab = {b2u[b]: b for b in range(256)}
long_piece = int(extra.pop("long_piece", "0"))
vocab["a" * long_piece if long_piece else "ab"] = 256
vocab["<|endoftext|>"] = 257
json.dump(vocab, open(d + "/vocab.json", "w"))
open(d + "/merges.txt", "w").write("#version: 0.2\n" + ("" if long_piece else "a b\n"))
E, F = 4, 8
if kind == "gpt2":
    config = {"model_type": "gpt2", "n_embd": E, "n_layer": 1, "n_head": 2,
              "n_positions": 8}
    shapes = {"wte.weight": [V, E], "wpe.weight": [8, E], "ln_f.weight": [E],
              "ln_f.bias": [E]}
    for n, s in [("ln_1.weight", [E]), ("ln_1.bias", [E]),
                 ("attn.c_attn.weight", [E, 3 * E]), ("attn.c_attn.bias", [3 * E]),
                 ("attn.c_proj.weight", [E, E]), ("attn.c_proj.bias", [E]),
                 ("ln_2.weight", [E]), ("ln_2.bias", [E]),
                 ("mlp.c_fc.weight", [E, 4 * E]), ("mlp.c_fc.bias", [4 * E]),
                 ("mlp.c_proj.weight", [4 * E, E]), ("mlp.c_proj.bias", [E])]:
        shapes["h.0." + n] = s
else:
    config = {"model_type": "llama", "hidden_size": E, "intermediate_size": F,
              "num_hidden_layers": 1, "num_attention_heads": 2,
              "max_position_embeddings": 8, "tie_word_embeddings": True}
    shapes = {"model.embed_tokens.weight": [V, E], "model.norm.weight": [E]}
    for n, s in [("input_layernorm.weight", [E]), ("self_attn.q_proj.weight", [E, E]),
                 ("self_attn.k_proj.weight", [E, E]), ("self_attn.v_proj.weight", [E, E]),
                 ("self_attn.o_proj.weight", [E, E]),
                 ("post_attention_layernorm.weight", [E]),
                 ("mlp.gate_proj.weight", [F, E]), ("mlp.up_proj.weight", [F, E]),
                 ("mlp.down_proj.weight", [E, F])]:
        shapes["model.layers.0." + n] = s
config.update({"vocab_size": V, "bos_token_id": 257, "eos_token_id": 257})
for k, v in extra.items():
    config[k] = json.loads(v)
json.dump(config, open(d + "/config.json", "w"))
header, data = {}, b""
for name, shape in sorted(shapes.items()):
    n = 1
    for x in shape:
        n *= x
    values = struct.pack("<%df" % n, *[0.01 * (k % 13) - 0.05 for k in range(n)])
    header[name] = {"dtype": "F32", "shape": shape,
                    "data_offsets": [len(data), len(data) + len(values)]}
    data += values
text = json.dumps(header).encode()
open(d + "/model.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data)
EOF
}

if ! "$python" -c 'import json, struct' 2>/dev/null; then
  fail "$python cannot run: the Hugging Face cases need it"
else
  hf="$tmp/hf"
  make_hf "$hf" gpt2
  cp -r "$hf" "$tmp/orig/hf"
  ln -s "$hf/model.safetensors" "$tmp/weights.link"
  expect 1 "refusing to write '$hf/config.json': it is the --hf input '$hf/config.json'" \
    -- \
    "$ember" convert --hf "$hf" -o "$hf/config.json"
  expect 1 "input '$hf/model.safetensors' (the same file under another name)" -- \
    "$ember" convert --hf "$hf" -o "$tmp/weights.link"
  expect 1 "it is the --hf input '$hf/merges.txt'" -- \
    "$ember" convert --hf "$hf/" -o "$hf/merges.txt"
  diff -r "$hf" "$tmp/orig/hf" >/dev/null || fail "the --hf directory changed"
  expect 0 "wrote $hf/model.ember" -- "$ember" convert --hf "$hf" -o "$hf/model.ember"
  rm -f "$hf/model.ember"

  # --- Models the loader would refuse are never written ---
  # refused LOADER_MESSAGE -- convert arguments...: status 1 with the loader's message,
  # no new output, and an older output left as it was.
  refused() {
    local reason="$1"
    shift 2
    local out="$tmp/out/refused.ember"
    rm -f "$out"
    expect 1 "refusing to write '$out': the loader would reject it: $reason" -- \
      "$ember" convert "$@" -o "$out"
    [ ! -e "$out" ] || fail "convert $* wrote $out"
    cp "$tmp/orig/model.ember" "$out"
    expect 1 "the loader would reject it: $reason" -- "$ember" convert "$@" -o "$out"
    same "$out" "$tmp/orig/model.ember"
    rm -f "$out"
  }
  "$python" - "$tok" "$tmp/badtok.bin" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
at = data.index(b"<0x41>")
open(sys.argv[2], "wb").write(data[:at] + b"<0xZZ>" + data[at + 6:])
EOF
  refused "tokenizer: byte token 68 is not <0xNN>" -- \
    --llama2c "$ckpt" --tokenizer "$tmp/badtok.bin"
  make_hf "$tmp/hf_bos" gpt2 bos_token_id=97
  refused "tokenizer: byte-level BPE has no piece for byte 0x61" -- --hf "$tmp/hf_bos"
  make_hf "$tmp/hf_long" gpt2 long_piece=100000
  refused "tokenizer: max_piece_bytes 100000 exceeds 256" -- --hf "$tmp/hf_long"
  make_hf "$tmp/hf_theta" llama rope_theta=1
  refused "config: rope_theta 1 outside (1, 1e12)" -- --hf "$tmp/hf_theta"
  make_hf "$tmp/hf_llama" llama
  expect 0 "wrote" -- "$ember" convert --hf "$tmp/hf_llama" -o "$tmp/out/llama.ember"
  no_temporaries "$tmp/out"
fi

echo "$failures failure(s)"
[ "$failures" = 0 ]
