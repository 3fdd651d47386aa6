#!/usr/bin/env python3
"""Summarises xnn_bench's JSON output: median GFLOP/s per implementation, side by side,
and the ratios XNNPACK / ember Highway per shape, batch and thread count.

  build/kernels/xnn_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
      --benchmark_out=xnn.json --benchmark_out_format=json
  /usr/bin/python3 kernels/xnn_bench_summary.py xnn.json [more.json ...]

Several files (runs) are pooled: the median is taken over every repetition of every run.
"""
import json
import statistics
import sys
from collections import defaultdict

IMPLS = ("ember_hwy_f32", "xnn_f32", "xnn_f16")


def main(paths):
    gflops = defaultdict(list)  # (impl, shape, batch, threads) -> [GFLOP/s per repetition]
    packed = {}
    contexts = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        ctx = data.get("context", {})
        contexts.append((path, ctx.get("loadavg_at_start", "?"), ctx.get("xnn_f16", "?")))
        for b in data["benchmarks"]:
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            impl, shape, batch, threads = b["run_name"].split("/")[:4]
            key = (impl, shape, int(batch.split(":")[1]), int(threads.split(":")[1]))
            gflops[key].append(b["GFLOPS"] / 1e9)
            if "packed_per_weight_byte" in b:
                packed[(impl, shape)] = b["packed_per_weight_byte"]
    for path, load, f16 in contexts:
        print(f"{path}: load average at start {load}; XNNPACK f16: {f16}")
    rows = sorted({k[1:] for k in gflops}, key=lambda k: (k[1], k[0], k[2]))
    header = (f"{'shape':<22}{'batch':>6}{'thr':>4}"
              + "".join(f"{i:>15}" for i in IMPLS)
              + f"{'xnn32/hwy':>11}{'xnn16/hwy':>11}{'n':>4}")
    print("median GFLOP/s over all repetitions")
    print(header)
    for shape, batch, threads in rows:
        med = {}
        n = 0
        for impl in IMPLS:
            samples = gflops.get((impl, shape, batch, threads), [])
            n = max(n, len(samples))
            med[impl] = statistics.median(samples) if samples else None
        cells = "".join(f"{med[i]:>15.1f}" if med[i] else f"{'-':>15}" for i in IMPLS)
        base = med["ember_hwy_f32"]
        ratios = "".join(
            f"{med[i] / base:>11.2f}" if med[i] and base else f"{'-':>11}"
            for i in ("xnn_f32", "xnn_f16"))
        print(f"{shape:<22}{batch:>6}{threads:>4}{cells}{ratios}{n:>4}")
    if packed:
        print("XNNPACK packed bytes per weight byte (operator included)")
        for (impl, shape), value in sorted(packed.items()):
            print(f"  {impl:<8} {shape:<22} {value:.4f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
