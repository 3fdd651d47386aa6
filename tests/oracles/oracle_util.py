"""Shared helpers of the PyTorch oracle tests: arguments, running the ember CLI (under
the cross-compiling emulator when there is one), writing safetensors and tokenizer
files, and comparing ember's numbers with the oracle's.

Each oracle script exits 0 when every comparison is within its tolerance, 1 otherwise,
and 77 (CTest's skip code) when PyTorch is missing, unless EMBER_REQUIRE_MODELS=1
(as tools/scripts/test.sh and CI set): then a missing PyTorch fails.

FOLLOW-UP(q8), once the quant branch's encodings land (this is not a test yet): convert
the GPT-2 and Llama directories again with `ember convert --hf DIR --dtype q8` and
compare with a reference computed from the dequantized weights (quantize them here as
runtime/model/model_writer.cc does: symmetric int8 per group of group_size inputs, scale =
max|w| / 127, round half to even), so weight rounding is not counted as error; what
remains is ember's on-the-fly int8 activation quantization, whose bound (expected near
1e-2 of max |logit|) should be set from measured figures and justified there.
"""
import argparse
import csv
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SKIP = 77


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--ember", required=True, help="the ember binary")
    p.add_argument("--models", default="", help="shared models directory")
    p.add_argument("--emulator", default="",
                   help="comma-separated command that runs target binaries (qemu)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = p.parse_args()
    args.models = os.environ.get("EMBER_MODELS") or args.models
    return args


def import_torch():
    """Returns (torch, numpy), or exits with the skip code (or fails in CI)."""
    try:
        import numpy
        import torch
    except ImportError as e:
        message = f"PyTorch/NumPy not importable by {sys.executable}: {e}"
        if os.environ.get("EMBER_REQUIRE_MODELS") == "1":
            print(f"FAIL: {message} (EMBER_REQUIRE_MODELS=1; tools/scripts/setup.sh all installs "
                  "python3-torch)")
            sys.exit(1)
        print(f"SKIP: {message}")
        sys.exit(SKIP)
    torch.manual_seed(0)
    return torch, numpy


def require_model_file(args, relative):
    path = os.path.join(args.models, relative)
    if os.path.exists(path):
        return path
    if os.environ.get("EMBER_REQUIRE_MODELS") == "1":
        print(f"FAIL: {path} is missing (set EMBER_MODELS)")
        sys.exit(1)
    print(f"SKIP: {path} is missing")
    sys.exit(SKIP)


class Ember:
    """Runs the ember CLI in a temporary directory."""

    def __init__(self, args):
        self.binary = args.ember
        self.emulator = [a for a in args.emulator.split(",") if a]
        self.keep = args.keep
        self.dir = tempfile.mkdtemp(prefix="ember_oracle_")

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, *argv):
        cmd = self.emulator + [self.binary] + [str(a) for a in argv]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
        return r.stdout

    def convert(self, hf_dir, name, dtype="f32"):
        out = self.path(name + ".ember")
        self.run("convert", "--hf", hf_dir, "-o", out, "--dtype", dtype)
        return out

    def logits(self, model, tokens, attn=False, threads=1):
        import numpy as np
        out = self.path("logits.npy")
        argv = ["logits", "-m", model, "--tokens", ",".join(map(str, tokens)), "--all",
                "-o", out, "-t", threads]
        if attn:
            argv += ["--attn", self.path("attn.npy")]
        self.run(*argv)
        logits = np.load(out)
        return (logits, np.load(self.path("attn.npy"))) if attn else logits

    def attn(self, model, tokens, layer="all", head="all", fmt="npy"):
        """`ember attn` weights: a [layers, heads, T, T] array (npy), or the CSV rows as
        (layer, head, query, key, weight) tuples (csv)."""
        import numpy as np
        out = self.path("attn_cli." + fmt)
        self.run("attn", "-m", model, "--tokens", ",".join(map(str, tokens)), "--layer",
                 layer, "--head", head, "-o", out)
        if fmt == "npy":
            return np.load(out)
        with open(out, encoding="utf-8") as f:
            rows = list(csv.reader(f))
        assert rows[0][:4] == ["layer", "head", "query", "key"] and rows[0][-1] == "weight"
        return [(int(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[-1])) for r in rows[1:]]

    def tokenize(self, model, text, bos=True):
        argv = ["tokenize", "-m", model, "-p", text] + ([] if bos else ["--no-bos"])
        return [int(t) for t in self.run(*argv).split()]

    def close(self):
        if self.keep:
            print(f"kept {self.dir}")
            return
        shutil.rmtree(self.dir)


def check_parameter_counts(report, ember, model, name, total, kinds, tied):
    """`ember inspect`'s parameter counts (total, per kind, the tied-classifier line)
    must equal PyTorch's: `total` = sum(p.numel() for p in module.parameters()), `kinds`
    = {kind: count} in inspect's kind names."""
    text = ember.run("inspect", "-m", model)
    block = text.split("\nparameters", 1)[1].split("\nweights by type", 1)[0]
    got_total = int(block.split()[0])
    got_kinds = {m[1]: int(m[2]) for m in re.finditer(r"^  (\S+) +(\d+)  \(", block, re.M)}
    got_tied = re.search(r"^  classifier +tied ", block, re.M) is not None
    report.check(f"{name}: ember inspect's total equals PyTorch's parameters() count",
                 got_total == total, f"({got_total} vs {total})")
    report.check(f"{name}: ember inspect's counts per kind equal PyTorch's",
                 got_kinds == kinds, f"({sorted(got_kinds.items())} vs "
                 f"{sorted(kinds.items())})")
    report.check(f"{name}: ember inspect {'shows' if tied else 'does not show'} a tied "
                 "classifier", got_tied == tied)


def to_bfloat16_bits(values):
    """float32 -> bfloat16 bit patterns, round to nearest even (as torch does)."""
    import numpy as np
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def write_safetensors(path, tensors, dtype="F32"):
    """Writes {name: array} as safetensors: u64 header size, JSON header, raw data."""
    import numpy as np
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        value = np.ascontiguousarray(value, dtype=np.float32)
        if dtype == "F32":
            data = value.tobytes()
        elif dtype == "F16":
            data = value.astype(np.float16).tobytes()
        elif dtype == "BF16":
            data = to_bfloat16_bits(value).tobytes()
        else:
            raise ValueError(dtype)
        header[name] = {"dtype": dtype, "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def stored_values(values, dtype):
    """The float32 values a dtype round-trips to (what ember will read)."""
    import numpy as np
    values = np.asarray(values, dtype=np.float32)
    if dtype == "F16":
        return values.astype(np.float16).astype(np.float32)
    if dtype == "BF16":
        bits = to_bfloat16_bits(values).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(values.shape)
    return values


def byte_to_unicode():
    """GPT-2's byte -> unicode alphabet (encoder.py's bytes_to_unicode)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
          list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def write_small_byte_level_tokenizer(directory, vocab_size):
    """vocab.json + merges.txt of `vocab_size` pieces: the 256 bytes, letter-pair merges,
    and <|endoftext|> last. Returns its id."""
    alphabet = byte_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    letters = "etaoinshrdlucmfw"
    pairs = [(a, b) for a in letters for b in letters][: vocab_size - 257]
    for a, b in pairs:
        vocab[a + b] = len(vocab)
    eot = len(vocab)
    vocab["<|endoftext|>"] = eot
    assert len(vocab) == vocab_size
    with open(os.path.join(directory, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(directory, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in pairs))
    return eot


class Report:
    """Collects comparisons; rel = max |ember - ref| / max |ref| (a scale-aware bound)."""

    def __init__(self, name):
        self.name = name
        self.failures = 0

    def compare(self, what, got, ref, max_abs, max_rel):
        import numpy as np
        got = np.asarray(got, dtype=np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        if got.shape != ref.shape:
            print(f"FAIL {self.name}: {what}: shape {got.shape} != {ref.shape}")
            self.failures += 1
            return
        diff = np.abs(got - ref)
        abs_err = float(diff.max()) if diff.size else 0.0
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        rel_err = abs_err / scale if scale > 0 else abs_err
        ok = abs_err <= max_abs and rel_err <= max_rel and np.isfinite(got).all()
        print(f"{'ok  ' if ok else 'FAIL'} {self.name}: {what}: max abs diff {abs_err:.3e} "
              f"(tol {max_abs:.0e}), rel {rel_err:.3e} (tol {max_rel:.0e}), "
              f"max |ref| {scale:.3g}, {ref.size} values")
        if not ok:
            self.failures += 1

    def rms(self, what, got, ref, max_rel_rms):
        """rms(ember - ref) / rms(ref): the typical error, where compare() bounds the worst."""
        import numpy as np
        got = np.asarray(got, dtype=np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        rel = float(np.sqrt(np.mean((got - ref) ** 2) / np.mean(ref ** 2)))
        worst = float(np.abs(got - ref).max()) / float(np.abs(ref).max())
        self.check(f"{what}: rms error {rel:.3e} of the logits' rms (tol {max_rel_rms:.0e}); "
                   f"worst {worst:.3e} of max |ref|", rel <= max_rel_rms and
                   np.isfinite(got).all())

    def top1(self, what, got, ref, min_agreement):
        """The share of positions whose most likely next token is the same."""
        import numpy as np
        same = float(np.mean(np.argmax(got, axis=-1) == np.argmax(ref, axis=-1)))
        self.check(f"{what}: same top-1 token at {100 * same:.1f} % of positions "
                   f"(at least {100 * min_agreement:.0f} %)", same >= min_agreement)

    def check(self, what, condition, detail=""):
        print(f"{'ok  ' if condition else 'FAIL'} {self.name}: {what} {detail}")
        if not condition:
            self.failures += 1

    def finish(self, ember):
        ember.close()
        if self.failures:
            print(f"{self.name}: {self.failures} comparison(s) failed")
            sys.exit(1)
        print(f"{self.name}: all comparisons passed")
        sys.exit(0)
