#!/usr/bin/python3
"""Checks `ember bench` output: every field present, figures positive and consistent.

usage: bench_check.py FORMAT FILE --reps R --tests pp16,tg8 --threads 1,2 [--models N]
                      [--backends CPU,XNNPACK] [--kv-types f32,q8] [--depths 0,16]
                      [--profile]
FORMAT is json, jsonl, csv or md. Exits 1 with the reasons when a check fails.
"""
import argparse
import csv
import json
import math
import re
import sys

# Every field, in the order ember writes them (llama-bench's names first).
FIELDS = [
    "build_commit", "cpu_info", "backends", "model_filename", "model_type", "model_size",
    "model_n_params", "n_batch", "n_threads", "type_k", "type_v", "use_mmap", "n_prompt",
    "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns",
    "samples_ts", "test", "dtype_mix", "hwy_target", "int8_dot", "isa", "ttft_ns", "load_ns",
    "peak_rss_bytes", "arena_bytes", "heap_allocs", "weight_bytes_per_token",
    "kv_bytes_per_token",
    "effective_gbps", "measured_gbps", "probe_bytes", "weights_read_gbps", "roofline_pct",
    "roofline_gbps", "roofline_read", "llc_bytes", "from_cache", "ember_version",
    "weight_type",
]
PROFILE_FIELDS = [
    "profile_matmul_pct", "profile_attention_pct", "profile_norms_pct", "profile_rope_pct",
    "profile_activations_pct", "profile_sampling_pct", "profile_other_pct",
]
# Not shares of the step (they are not in its 100 %): time in regions that ran on more
# than one thread, and how busy the threads were in them (null: no such region).
THREAD_FIELDS = ["profile_parallel_pct", "profile_threads_busy_pct"]
STRINGS = {"build_commit", "cpu_info", "backends", "model_filename", "model_type",
           "type_k", "type_v", "test_time", "test", "dtype_mix", "hwy_target", "int8_dot",
           "isa", "roofline_read", "ember_version", "weight_type"}
LISTS = {"samples_ns", "samples_ts"}
POSITIVE = ["model_size", "model_n_params", "n_batch", "n_threads", "avg_ns", "avg_ts",
            "ttft_ns", "load_ns", "peak_rss_bytes", "arena_bytes",
            "weight_bytes_per_token", "effective_gbps", "measured_gbps", "probe_bytes",
            "roofline_pct"]

errors = []


def check(condition, message):
    if not condition:
        errors.append(message)
    return condition


def close(a, b, rel=1e-6, abs_tol=0.0):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def from_csv(row):
    """A CSV row as the JSON object it stands for."""
    out = {}
    for key, text in row.items():
        if key in STRINGS:
            out[key] = text
        elif key in LISTS:
            out[key] = [float(v) for v in text.split(",")]
        elif key in ("use_mmap", "from_cache"):
            out[key] = {"true": True, "false": False}[text]
        elif text == "":
            out[key] = None
        else:
            out[key] = float(text)
    return out


def check_result(r, args, where):
    want = FIELDS + (PROFILE_FIELDS + THREAD_FIELDS if args.profile else [])
    if not check(list(r.keys()) == want,
                 f"{where}: fields {list(r.keys())}, want {want}"):
        return
    for key in STRINGS:
        check(isinstance(r[key], str) and r[key] != "", f"{where}: {key} is empty")
    for key in POSITIVE:
        check(r[key] > 0, f"{where}: {key} = {r[key]} is not positive")
    for key in ["stddev_ns", "stddev_ts"]:
        check(r[key] >= 0, f"{where}: {key} = {r[key]} is negative")
    # -1: not counted (a sanitizer build keeps its own allocator).
    check(float(r["heap_allocs"]).is_integer() and r["heap_allocs"] >= -1,
          f"{where}: heap_allocs = {r['heap_allocs']}")
    check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["test_time"]) is not None,
          f"{where}: test_time {r['test_time']!r} is not ISO 8601 UTC")
    check(r["type_k"] in args.kv_types.split(",") and r["type_v"] == r["type_k"] and
          r["use_mmap"] is True, f"{where}: type_k/type_v/use_mmap")
    n_prompt, n_gen = int(r["n_prompt"]), int(r["n_gen"])
    test = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}"
    if int(r["n_depth"]) > 0:
        test += f" @ d{int(r['n_depth'])}"
    check((n_prompt == 0) != (n_gen == 0), f"{where}: n_prompt {n_prompt}, n_gen {n_gen}")
    check(r["test"] == test, f"{where}: test {r['test']} for n_prompt/n_gen ({test})")
    ns, ts = r["samples_ns"], r["samples_ts"]
    if not check(len(ns) == args.reps and len(ts) == args.reps,
                 f"{where}: {len(ns)} samples_ns and {len(ts)} samples_ts, want {args.reps}"):
        return
    n_tokens = n_prompt + n_gen
    for i, (a, b) in enumerate(zip(ns, ts)):
        check(a > 0 and b > 0, f"{where}: sample {i} not positive")
        # tokens/s x ns = tokens.
        check(close(a * b / 1e9, n_tokens, rel=1e-5),
              f"{where}: sample {i}: {b} t/s x {a} ns != {n_tokens} tokens")
    mean_ns = sum(ns) / len(ns)
    check(abs(r["avg_ns"] - mean_ns) <= 1, f"{where}: avg_ns {r['avg_ns']} != {mean_ns}")
    check(close(r["avg_ts"], sum(ts) / len(ts), rel=1e-6), f"{where}: avg_ts is not the mean")
    # The mean rate lies between the slowest and fastest sample, and (Jensen) at or above
    # the rate of the mean time.
    lo, hi = n_tokens * 1e9 / max(ns), n_tokens * 1e9 / min(ns)
    check(lo * (1 - 1e-6) <= r["avg_ts"] <= hi * (1 + 1e-6),
          f"{where}: avg_ts {r['avg_ts']} outside the samples' [{lo}, {hi}]")
    check(r["avg_ts"] >= n_tokens * 1e9 / r["avg_ns"] * (1 - 1e-4),
          f"{where}: avg_ts {r['avg_ts']} below tokens / avg_ns")
    if len(ns) > 1:
        m = sum(ns) / len(ns)
        sd = math.sqrt(sum((x - m) ** 2 for x in ns) / (len(ns) - 1))
        check(abs(r["stddev_ns"] - sd) <= 1, f"{where}: stddev_ns {r['stddev_ns']} != {sd}")
    check(close(r["effective_gbps"],
                (r["weight_bytes_per_token"] + r["kv_bytes_per_token"]) * r["avg_ts"] / 1e9,
                rel=1e-4), f"{where}: effective_gbps != (weight + KV bytes) x t/s")
    check((r["kv_bytes_per_token"] > 0) == (n_gen > 0),
          f"{where}: kv_bytes_per_token {r['kv_bytes_per_token']} (decode only)")
    # The file read is skipped (0) only for a file under 64 words per thread.
    small = r["model_size"] < 512 * r["n_threads"]
    check((r["weights_read_gbps"] > 0) != small,
          f"{where}: weights_read_gbps {r['weights_read_gbps']} for a "
          f"{r['model_size']}-byte file")
    # The roofline is the probe's best read: the buffer's or the file's, whichever is more.
    ceiling = max(r["weights_read_gbps"], r["measured_gbps"])
    check(close(r["roofline_gbps"], ceiling, rel=1e-9),
          f"{where}: roofline_gbps {r['roofline_gbps']} is not the best read {ceiling}")
    check(close(r["roofline_pct"], 100 * r["effective_gbps"] / ceiling, rel=1e-4),
          f"{where}: roofline_pct != effective / roofline_gbps")
    check(re.fullmatch(r"(buffer|file), (stream|prefetch|4 streams)", r["roofline_read"])
          is not None, f"{where}: roofline_read {r['roofline_read']!r}")
    check(r["roofline_read"].startswith("file") == (r["weights_read_gbps"] > r["measured_gbps"]),
          f"{where}: roofline_read {r['roofline_read']!r} is not the faster memory")
    # Served from the cache: the test's bytes fit the last-level cache (0: unknown).
    test_bytes = (r["weight_bytes_per_token"] + r["kv_bytes_per_token"] if n_gen > 0
                  else r["weight_bytes_per_token"] * n_prompt)
    check(r["llc_bytes"] >= 0 and isinstance(r["from_cache"], bool),
          f"{where}: llc_bytes {r['llc_bytes']}, from_cache {r['from_cache']!r}")
    check(r["from_cache"] == (0 < r["llc_bytes"] and test_bytes <= r["llc_bytes"]),
          f"{where}: from_cache {r['from_cache']} for {test_bytes} bytes, LLC {r['llc_bytes']}")
    if n_gen == 0:
        check(r["ttft_ns"] >= min(ns), f"{where}: pp ttft {r['ttft_ns']} < its prefill")
    else:
        check(r["ttft_ns"] <= max(ns), f"{where}: tg ttft {r['ttft_ns']} > a whole run")
    if args.profile:
        shares = [r[k] for k in PROFILE_FIELDS]
        check(all(s >= 0 for s in shares), f"{where}: a negative profile share {shares}")
        check(abs(sum(shares) - 100) < 0.5, f"{where}: profile shares sum to {sum(shares)}")
        check(r["profile_matmul_pct"] > 0, f"{where}: no matmul time")
        if n_gen == 0:
            check(r["profile_sampling_pct"] == 0, f"{where}: sampling inside a prefill")
        else:
            check(r["profile_sampling_pct"] > 0, f"{where}: no sampling in decode")
        parallel, busy = r["profile_parallel_pct"], r["profile_threads_busy_pct"]
        check(0 <= parallel <= 100, f"{where}: profile_parallel_pct {parallel}")
        # One thread runs no region; with more, a small model's steps may not have one.
        if r["n_threads"] == 1:
            check(parallel == 0 and busy is None, f"{where}: a region on one thread")
        else:
            check((busy is None) == (parallel == 0),
                  f"{where}: threads busy {busy} with {parallel} % in regions")
            check(busy is None or 0 < busy <= 100.5, f"{where}: threads busy {busy} %")
            if args.regions:
                check(busy is not None, f"{where}: no region ran on {r['n_threads']} threads")


def expected_tests(args):
    """(backend, n_threads, test) in ember's order: per model, per backend, per KV cache
    type, per thread count, per depth, pp then tg."""
    tests = args.tests.split(",")
    order = [t for t in tests if t.startswith("pp")] + [t for t in tests if t.startswith("tg")]
    depths = [int(d) for d in args.depths.split(",")]
    return [(b, int(t), test + (f" @ d{d}" if d else ""))
            for _ in range(args.models) for b in args.backends.split(",")
            for _ in args.kv_types.split(",") for t in args.threads.split(",")
            for d in depths for test in order]


def check_markdown(text, args):
    lines = text.splitlines()
    check(lines and lines[0].startswith("ember bench: build "), "md: no header line")
    tables = [l for l in lines if l.startswith("|")]
    rows = [l for l in tables if not l.startswith("|-") and "| model " not in l]
    want_tables = 4 if args.profile else 3
    check(sum(1 for l in tables if l.startswith("| model ")) == want_tables,
          f"md: want {want_tables} tables")
    check(len(rows) == want_tables * len(expected_tests(args)),
          f"md: {len(rows)} rows, want {want_tables} per test")
    for l in tables:
        check(len(l) <= 140, f"md: a line of {len(l)} characters: {l}")
    for backend, threads, test in expected_tests(args):
        check(any(re.search(rf"\|\s+{threads} \| {test}\s", l) for l in rows),
              f"md: no row for {test} at {threads} threads")
        row = rf"\| {backend}\s+\|\s+{threads} \| {test}\s"
        check(any(re.search(row, l) for l in rows),
              f"md: no row for {test} at {threads} threads on {backend}")
    check("±" in text and "%" in text, "md: no '±' or roofline %")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("format", choices=["json", "jsonl", "csv", "md"])
    p.add_argument("file")
    p.add_argument("--reps", type=int, required=True)
    p.add_argument("--tests", required=True)
    p.add_argument("--threads", required=True)
    p.add_argument("--models", type=int, default=1)
    p.add_argument("--backends", default="CPU", help="the backends field, in run order")
    p.add_argument("--kv-types", default="f32", help="type_k of each run, in run order")
    p.add_argument("--depths", default="0", help="-d of the run")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--regions", action="store_true",
                   help="every test above one thread ran regions on several threads")
    args = p.parse_args()
    text = open(args.file, encoding="utf-8").read()
    if args.format == "md":
        check_markdown(text, args)
    else:
        if args.format == "json":
            results = json.loads(text)
            check(isinstance(results, list), "json: not an array")
        elif args.format == "jsonl":
            results = [json.loads(line) for line in text.splitlines()]
        else:
            reader = csv.DictReader(text.splitlines())
            check(reader.fieldnames ==
                  FIELDS + (PROFILE_FIELDS + THREAD_FIELDS if args.profile else []),
                  f"csv: header {reader.fieldnames}")
            results = [from_csv(row) for row in reader]
        got = [(r.get("backends"), int(r.get("n_threads", 0)), r.get("test"))
               for r in results]
        kv_types = [r.get("type_k") for r in results]
        per_type = len(expected_tests(args)) // len(args.kv_types.split(",")) // args.models
        want_types = [k for _ in range(args.models) for b in args.backends.split(",")
                      for k in args.kv_types.split(",")
                      for _ in range(per_type // len(args.backends.split(",")))]
        check(kv_types == want_types, f"{args.format}: KV types {kv_types}, want {want_types}")
        check(all(r.get("type_v") == r.get("type_k") for r in results), "type_v != type_k")
        check([int(r.get("n_depth", -1)) for r in results] ==
              [int(t.split(" @ d")[1]) if " @ d" in t else 0 for _, _, t in expected_tests(args)],
              f"{args.format}: n_depth does not match the tests")
        check(got == expected_tests(args), f"{args.format}: tests {got}, want "
              f"{expected_tests(args)}")
        for i, r in enumerate(results):
            check_result(r, args, f"{args.format} result {i} ({r.get('test')})")
    if errors:
        print("\n".join(f"FAIL: {e}" for e in errors))
        sys.exit(1)
    print(f"ok: {args.format} {args.file}")


if __name__ == "__main__":
    main()
