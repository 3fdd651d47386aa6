#!/usr/bin/env python3
"""Summarises xnn_bench's JSON output: per shape, batch and thread count, the median and
the best GFLOP/s of each implementation over the repetitions (wall-clock time), side by
side, with the ratios XNNPACK / ember Highway of the medians and of the bests; for one
thread also the median over CPU time (time the benchmark thread actually ran, which
discounts other processes holding the cores; meaningless with workers, so not shown).

  build/tools/bench/xnn_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
      --benchmark_out=xnn.json --benchmark_out_format=json
  /usr/bin/python3 tools/bench/xnn_bench_summary.py xnn.json [more.json ...]

Several files (runs) are pooled: the median is taken over every repetition of every run.
"""
import json
import statistics
import sys
from collections import defaultdict

IMPLS = ("ember_hwy_f32", "xnn_f32", "xnn_f16")


def main(paths):
    gflops = defaultdict(list)  # (impl, shape, batch, threads) -> [GFLOP/s per repetition]
    cpu_gflops = defaultdict(list)  # the same over CPU time
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
            gflops[key].append(b["GFLOPS"])
            cpu_gflops[key].append(b["GFLOPS"] * b["real_time"] / b["cpu_time"])
            if "packed_per_weight_byte" in b:
                packed[(impl, shape)] = b["packed_per_weight_byte"]
    for path, load, f16 in contexts:
        print(f"{path}: load average at start {load}; XNNPACK f16: {f16}")
    rows = sorted({k[1:] for k in gflops}, key=lambda k: (k[1], k[2], k[0]))

    def stat(table, impl, key, fn):
        samples = table.get((impl,) + key, [])
        return fn(samples) if samples else None

    def num(v, width, digits=1):
        return f"{v:>{width}.{digits}f}" if v else f"{'-':>{width}}"

    for title, fn in (("median", statistics.median), ("best", max)):
        print(f"{title} GFLOP/s over the repetitions (wall clock)")
        print(f"{'shape':<22}{'batch':>6}{'thr':>4}" + "".join(f"{i:>15}" for i in IMPLS)
              + f"{'xnn32/hwy':>11}{'xnn16/hwy':>11}{'n':>4}")
        for key in rows:
            v = {i: stat(gflops, i, key, fn) for i in IMPLS}
            n = max(len(gflops.get((i,) + key, [])) for i in IMPLS)
            base = v["ember_hwy_f32"]
            ratios = "".join(num(v[i] / base if v[i] and base else None, 11, 2)
                             for i in ("xnn_f32", "xnn_f16"))
            print(f"{key[0]:<22}{key[1]:>6}{key[2]:>4}"
                  + "".join(num(v[i], 15) for i in IMPLS) + ratios + f"{n:>4}")
        print()
    print("median GFLOP per CPU-second of the process")
    print(f"{'shape':<22}{'batch':>6}{'thr':>4}" + "".join(f"{i:>15}" for i in IMPLS)
          + f"{'xnn32/hwy':>11}{'xnn16/hwy':>11}")
    for key in rows:
        v = {i: stat(cpu_gflops, i, key, statistics.median) for i in IMPLS}
        base = v["ember_hwy_f32"]
        ratios = "".join(num(v[i] / base if v[i] and base else None, 11, 2)
                         for i in ("xnn_f32", "xnn_f16"))
        print(f"{key[0]:<22}{key[1]:>6}{key[2]:>4}"
              + "".join(num(v[i], 15) for i in IMPLS) + ratios)
    print()
    if packed:
        print("XNNPACK packed bytes per weight byte (operator included)")
        for (impl, shape), value in sorted(packed.items()):
            print(f"  {impl:<8} {shape:<22} {value:.4f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
