#!/usr/bin/env python3
"""ember bench's reports end to end: the history, the chart and the comparison.

- History: `ember bench --history` appends one JSON line per result, the same objects
  -o jsonl prints, with what identifies it (CPU, Highway target, int8 path, threads,
  version, commit, the model file's SHA-256 as hashlib computes it, weight and KV types,
  date); a second run appends and leaves the first run's bytes as they were.
- Chart: `ember bench --chart` and `ember bench-chart` (a file written here with known
  values, and a configuration field ember does not know, which must become a series)
  make well-formed, self-contained SVG that headless Chromium renders at its size; in the
  PNG every bar ends where the drawn axis puts its value, in its series' legend colour,
  left to right in the data's order, with the roofline mark at the decode roofline.
  `bench-chart --format md` tabulates the same medians and roofline shares.
- Comparison: two runs written here with known ratios (5 repetitions each; one pair 25 %
  faster, one 20 % slower, one within noise; results without a partner; the NEW file in
  an older field set: samples_ns instead of samples_ts, no test field, a field OLD lacks)
  compared as JSON, CSV, markdown and SVG (rendered: dots at their ratios, in their
  verdict's colour); bad input refused with exit status 1 and a clear message.

Exits 0 on success, 1 on failure, 77 (skip) without Chromium unless
EMBER_REQUIRE_MODELS=1 (CI). Standard library only.
"""
import argparse
import csv
import hashlib
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from svg_render import Checks, chromium_or_skip, read_png, remove_or_keep, render

NS = "{http://www.w3.org/2000/svg}"
IDENTITY = ["cpu_info", "hwy_target", "int8_dot", "n_threads", "ember_version",
            "build_commit", "model_sha256", "weight_type", "type_k", "type_v", "test_time"]
GREEN, RED, GREY = (0x1a, 0x7f, 0x37), (0xcf, 0x22, 0x2e), (0x8c, 0x95, 0x9f)


def hex_colour(text):
    return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))


def near(got, want, tol=24):
    return all(abs(a - b) <= tol for a, b in zip(got, want))


def translate(element):
    m = re.fullmatch(r"translate\(([-0-9.]+),([-0-9.]+)\)", element.get("transform"))
    return float(m[1]), float(m[2])


class Tool:
    def __init__(self, ember, tmp):
        self.ember, self.tmp = ember, tmp

    def run(self, *args, status=0):
        r = subprocess.run([self.ember, *args], capture_output=True, text=True, timeout=300)
        if r.returncode != status:
            raise RuntimeError(f"ember {' '.join(args)}: status {r.returncode}, want "
                               f"{status}\n{r.stderr[-2000:]}")
        return r

    def path(self, name):
        return os.path.join(self.tmp, name)


def well_formed(checks, svg_path, what):
    """The SVG's root (or None), checked to be self-contained."""
    text = open(svg_path, encoding="utf-8").read()
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as e:
        checks.check(f"{what}: well-formed XML", False, str(e))
        return None
    checks.check(f"{what}: root is <svg>", root.tag == NS + "svg", root.tag)
    tags = {e.tag.replace(NS, "") for e in root.iter()}
    checks.check(f"{what}: no scripts, images or links",
                 not tags & {"script", "image", "foreignObject", "use", "a"}, str(tags))
    checks.check(f"{what}: no external references", not re.search(
        r"href|@import|url\(|https?:(?!//www\.w3\.org/2000/svg)", text))
    return root


def rendered(checks, args, svg_path, root, what):
    """The rendered PNG's pixel function, after the size and not-blank checks."""
    width, height = round(float(root.get("width"))), round(float(root.get("height")))
    png = svg_path[:-4] + ".png"
    r = render(args.chromium, svg_path, png, width, height, svg_path[:-4] + "-profile")
    checks.check(f"{what}: chromium exits 0", r.returncode == 0,
                 "" if r.returncode == 0 else r.stderr[-1000:])
    if not checks.check(f"{what}: chromium wrote a PNG", os.path.exists(png)):
        return None
    png_w, png_h, pixel = read_png(png)
    checks.check(f"{what}: PNG has the SVG's size", (png_w, png_h) == (width, height),
                 f"{png_w}x{png_h} vs {width}x{height}")
    colours = {pixel(x, y) for y in range(0, png_h, 2) for x in range(0, png_w, 2)}
    checks.check(f"{what}: not blank", len(colours) > 20, f"{len(colours)} colours")
    checks.check(f"{what}: white corner", pixel(1, png_h - 2) == (255, 255, 255))
    return pixel


def legend_colours(root):
    """Series label -> its swatch colour."""
    legend = root.find(f".//{NS}g[@class='legend']")
    items = list(legend)
    out = {}
    for swatch, label in zip(items, items[1:]):
        if swatch.tag == NS + "rect" and label.tag == NS + "text":
            out[label.text] = swatch.get("fill")
    return out


def bar_panels(root):
    """Per panel: its title, origin, axis (value -> y from the tick marks) and bars as
    (x, width, value it claims, fill), left to right."""
    panels = []
    for g in root.iter(NS + "g"):
        if g.get("class") != "panel":
            continue
        ox, oy = translate(g)
        ticks = []
        for t in g.iter(NS + "g"):
            if t.get("class") == "ytick":
                d = t.find(NS + "path").get("d")
                ticks.append((float(t.get("data-value")), float(re.match(r"M0 ([-0-9.]+)", d)[1])))
        (v0, y0), (v1, y1) = ticks[0], ticks[-1]

        def y_of(value, v0=v0, y0=y0, v1=v1, y1=y1, oy=oy):
            return oy + y0 + (value - v0) * (y1 - y0) / (v1 - v0)

        bars = sorted((float(b.get("x")) + ox, float(b.get("width")), float(b.get("data-value")),
                       b.get("fill")) for b in g.iter(NS + "rect") if b.get("class") == "bar")
        title = next(t.text for t in g.iter(NS + "text") if t.get("class") == "pt")
        panels.append({"title": title, "y_of": y_of, "bars": bars, "bottom": oy})
    return panels


def check_bar(checks, pixel, what, x, width, top_y, bottom_y, colour, roofline_y=None):
    """The bar's colour inside it near its top and mid-height, not above its top; the
    roofline mark (dark) at roofline_y."""
    col = int(x + 3)
    if bottom_y - top_y >= 6 and (roofline_y is None or abs(roofline_y - top_y) > 5):
        inside, above = pixel(col, int(top_y + 2.5)), pixel(col, int(top_y - 2.5))
        checks.check(f"{what}: bar ends at its value on the axis (y {top_y:.1f})",
                     near(inside, colour) and not near(above, colour),
                     f"inside {inside}, above {above}, colour {colour}")
    if bottom_y - top_y >= 4:
        mid = int((top_y + bottom_y) / 2)
        if roofline_y is None or abs(roofline_y - mid) > 3:
            checks.check(f"{what}: bar in its legend colour", near(pixel(col, mid), colour),
                         f"{pixel(col, mid)} vs {colour}")
    if roofline_y is not None:
        dark = [pixel(int(xx), int(round(roofline_y)) + dy) for xx in range(int(x) - 2, int(x + width) + 3)
                for dy in (-1, 0, 1)]
        checks.check(f"{what}: roofline mark at y {roofline_y:.1f}",
                     any(max(p) < 90 for p in dark))


def roofline_ts(r):
    if not r["n_gen"] or r["n_prompt"]:
        return None
    gbps = r["weights_read_gbps"] or r["measured_gbps"]
    return gbps * 1e9 / (r["weight_bytes_per_token"] + r["kv_bytes_per_token"])


def test_history_and_bench_chart(checks, args, tool):
    small, q8 = tool.path("small.ember"), tool.path("small_q8.ember")
    for path, dtype in ((small, "f32"), (q8, "q8")):
        tool.run("convert", "--synthetic", "custom", "--dim", "64", "--hidden", "128",
                 "--layers", "2", "--heads", "4", "--kv-heads", "2", "--vocab", "512",
                 "--ctx", "64", "--seed", "7", "--dtype", dtype, "-o", path)
    history, chart = tool.path("history.jsonl"), tool.path("bench.svg")
    r = tool.run("bench", "-m", small, "-m", q8, "-p", "8", "-n", "4", "-t", "1,2", "-r", "2",
                 "--probe-mib", "16", "-o", "jsonl", "--history", history, "--chart", chart)
    printed = r.stdout.splitlines(keepends=True)
    first_run = open(history, encoding="utf-8").read()
    checks.check("history: one line per result, as -o jsonl prints them",
                 first_run == "".join(printed) and len(printed) == 8, f"{len(printed)} lines")
    sha = {os.path.basename(p): hashlib.sha256(open(p, "rb").read()).hexdigest()
           for p in (small, q8)}
    records = [json.loads(line) for line in printed]
    for rec in records:
        missing = [k for k in IDENTITY if rec.get(k) in (None, "")]
        checks.check(f"history {rec['model_filename']} {rec['test']} t{rec['n_threads']}: "
                     "identifying fields", not missing, f"missing {missing}")
        checks.check(f"history {rec['model_filename']}: model_sha256 is hashlib's",
                     rec.get("model_sha256") == sha[rec["model_filename"]])
    checks.check("history: weight types", {r["weight_type"] for r in records} == {"f32", "q8"})
    checks.check("bench reports the hash's cost", "sha256 of" in r.stderr)
    # A second run appends; the first run's bytes stay.
    tool.run("bench", "-m", small, "-p", "8", "-n", "0", "-r", "2", "--probe-mib", "16",
             "-o", "json", "--history", history)
    both = open(history, encoding="utf-8").read()
    checks.check("history: a second run appends", both.startswith(first_run) and
                 len(both.splitlines()) == 9, f"{len(both.splitlines())} lines")

    root = well_formed(checks, chart, "bench chart")
    if root is None:
        return
    title = root.find(NS + "title").text
    checks.check("bench chart: title names the CPU", records[0]["cpu_info"] in title, title)
    texts = " ".join("".join(t.itertext()) for t in root.iter(NS + "text"))
    for want in (f"ember {records[0]['ember_version']} ({records[0]['build_commit']})",
                 f"kernels {records[0]['hwy_target']}", "tokens/s", "1 thread", "2 threads",
                 "small.ember", "small_q8.ember", "roofline", "pp8 (prefill)", "tg4 (decode)"):
        checks.check(f"bench chart: text {want!r}", want in texts)
    pixel = rendered(checks, args, chart, root, "bench chart")
    if pixel is None:
        return
    colours = legend_colours(root)
    panels = bar_panels(root)
    checks.check("bench chart: a panel per test", [p["title"] for p in panels] ==
                 ["pp8 (prefill)", "tg4 (decode)"], str([p["title"] for p in panels]))
    # Left to right: models in run order, then thread counts.
    for panel, test in zip(panels, ("pp8", "tg4")):
        want = [r for r in records if r["test"] == test]
        got = panel["bars"]
        checks.check(f"bench chart {test}: one bar per result", len(got) == len(want))
        for (x, width, value, fill), rec in zip(got, want):
            what = f"bench chart {test} {rec['model_filename']} t{rec['n_threads']}"
            checks.check(f"{what}: value is avg_ts", math.isclose(value, rec["avg_ts"], rel_tol=1e-5),
                         f"{value} vs {rec['avg_ts']}")
            label = f"{rec['n_threads']} thread" + ("s" if rec["n_threads"] > 1 else "")
            ref = roofline_ts(rec)
            check_bar(checks, pixel, what, x, width, panel["y_of"](rec["avg_ts"]),
                      panel["bottom"], hex_colour(colours[label]),
                      panel["y_of"](ref) if ref else None)


def test_chart_of_known_values(checks, args, tool):
    """bench-chart on values written here; "isa_tier" is a field ember does not know."""
    rows, order = [], []
    for model, mtype in (("a.ember", "llama 15M f32"), ("b.ember", "llama 15M q8")):
        for threads in (1, 2):
            for tier in ("AVX2", "AVX3_DL"):
                base = (100 if model == "a.ember" else 300) * threads * (1.5 if tier == "AVX3_DL" else 1)
                samples = [base * 0.97, base * 1.03]
                rows.append({"cpu_info": "Test CPU <x>", "model_filename": model, "model_type": mtype,
                             "n_threads": threads, "isa_tier": tier, "n_prompt": 0, "n_gen": 64,
                             "test": "tg64", "samples_ts": samples,
                             "weight_bytes_per_token": 1e6, "kv_bytes_per_token": 0,
                             "weights_read_gbps": base * 1.4e-3, "measured_gbps": 1})
                label = f"{threads} thread{'s' if threads > 1 else ''} · isa_tier {tier}"
                order.append((model, label, base, base * 1.4))
    data = tool.path("known.jsonl")
    with open(data, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    svg = tool.path("known.svg")
    tool.run("bench-chart", data, "-o", svg)
    root = well_formed(checks, svg, "known chart")
    if root is None:
        return
    # The same as a table: median tokens/s and the share of the roofline per cell.
    table = tool.run("bench-chart", data, "--format", "md").stdout
    lines = [l for l in table.splitlines() if l.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = {}
    for line in lines[1:]:
        row = [c.strip() for c in line.strip("|").split("|")]
        for name, cell in zip(header[2:], row[2:]):
            cells[(row[0], name)] = cell
    for model, label, mean, ref in order:
        want = f"{mean:.0f} ({100 * mean / ref:.0f} %)"
        got = cells.get((model, "tg64, " + label))
        checks.check(f"known table {model} {label}: {want}", got == want, str(got))
    checks.check("known chart: title escapes the CPU name",
                 "Test CPU <x>" in root.find(NS + "title").text)
    colours = legend_colours(root)
    want_labels = sorted({label for _, label, _, _ in order})
    checks.check("known chart: a series per thread count and unknown field",
                 sorted(colours) == want_labels, str(sorted(colours)))
    pixel = rendered(checks, args, svg, root, "known chart")
    if pixel is None:
        return
    panel = bar_panels(root)[0]
    # Groups (models) left to right; in a group the series in their order.
    want = sorted(order, key=lambda o: (o[0], want_labels.index(o[1])))
    checks.check("known chart: 8 bars", len(panel["bars"]) == 8)
    for (x, width, value, fill), (model, label, mean, ref) in zip(panel["bars"], want):
        what = f"known chart {model} {label}"
        checks.check(f"{what}: value", math.isclose(value, mean, rel_tol=1e-9), f"{value} vs {mean}")
        check_bar(checks, pixel, what, x, width, panel["y_of"](mean), panel["bottom"],
                  hex_colour(colours[label]), panel["y_of"](ref))
        # The whisker's top cap: slowest and fastest (0.97 and 1.03 of the mean).
        cap = pixel(int(x + width / 2), int(round(panel["y_of"](mean * 1.03))))
        checks.check(f"{what}: whisker reaches the fastest repetition", max(cap) < 120, str(cap))


def write_run(path, records, old_style=False):
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            r = dict(r)
            if old_style:  # an older file: no test field, samples_ns, no int8_dot
                tokens = r["n_prompt"] + r["n_gen"]
                r["samples_ns"] = [round(tokens * 1e9 / ts) for ts in r.pop("samples_ts")]
                del r["test"], r["int8_dot"]
                r["extra_field"] = "only in NEW"
            f.write(json.dumps(r) + "\n")


def run_record(model, threads, test, samples, commit):
    n = int(test[2:])
    return {"build_commit": commit, "cpu_info": "Test CPU", "int8_dot": "avx512-vnni",
            "model_filename": model, "n_threads": threads, "n_prompt": n if test[0] == "p" else 0,
            "n_gen": n if test[0] == "t" else 0, "test": test, "samples_ts": samples,
            "test_time": "2026-11-25T00:00:00Z"}


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def test_compare(checks, args, tool):
    spread = [0.99, 1.005, 1.0, 1.01, 0.995]
    old = [run_record("m.ember", 1, "tg64", [100 * s for s in spread], "aaaa"),
           run_record("m.ember", 1, "pp128", [1000 * s for s in spread], "aaaa"),
           run_record("m.ember", 2, "tg64", [180 * s for s in spread], "aaaa"),
           run_record("m.ember", 4, "tg64", [200 * s for s in spread], "aaaa")]  # only OLD
    new_spread = [1.004, 0.992, 1.008, 0.998, 1.001]  # overlaps OLD's
    new = [run_record("m.ember", 1, "tg64", [125 * s for s in spread], "bbbb"),   # 1.25
           run_record("m.ember", 1, "pp128", [800 * s for s in spread], "bbbb"),  # 0.8
           run_record("m.ember", 2, "tg64", [180.54 * s for s in new_spread], "bbbb"),  # ~1.003
           run_record("m.ember", 8, "tg64", [300 * s for s in spread], "bbbb")]  # only NEW
    old_path, new_path = tool.path("old.jsonl"), tool.path("new.jsonl")
    write_run(old_path, old)
    write_run(new_path, new, old_style=True)
    out = json.loads(tool.run("bench-compare", old_path, new_path, "-o", "json").stdout)
    pairs = {(p["n_threads"], p["test"]): p for p in out["pairs"]}
    checks.check("compare: three pairs", sorted(pairs) == [("1", "pp128"), ("1", "tg64"), ("2", "tg64")],
                 str(sorted(pairs)))
    expect = {("1", "tg64"): (1.25, "faster"), ("1", "pp128"): (0.8, "slower"),
              ("2", "tg64"): (median([180.54 * s for s in new_spread]) / 180, "same")}
    for key, (ratio, change) in expect.items():
        p = pairs.get(key)
        if not checks.check(f"compare {key}: paired", p is not None):
            continue
        checks.check(f"compare {key}: ratio {ratio:.4f}", math.isclose(p["ratio"], ratio, rel_tol=1e-6),
                     str(p["ratio"]))
        checks.check(f"compare {key}: {change}", p["change"] == change, p["change"])
        checks.check(f"compare {key}: interval holds the ratio",
                     p["ratio_low"] <= p["ratio"] <= p["ratio_high"])
        if change != "same":  # 5 against 5, no overlap: the exact p is 2 / C(10, 5)
            checks.check(f"compare {key}: p = 2/252", math.isclose(p["p_value"], 2 / 252, rel_tol=1e-9),
                         str(p["p_value"]))
        else:
            checks.check(f"compare {key}: interval spans 1", p["ratio_low"] < 1 < p["ratio_high"])
    checks.check("compare: build_commit is what differs",
                 out["differences"] == [{"field": "build_commit", "old": "aaaa", "new": "bbbb"}],
                 str(out["differences"]))
    checks.check("compare: unpaired listed", [u["n_threads"] for u in out["only_old"]] == ["4"] and
                 [u["n_threads"] for u in out["only_new"]] == ["8"])
    checks.check("compare: fields of one file only", out["only_old_fields"] == ["int8_dot"] and
                 out["only_new_fields"] == ["extra_field"],
                 f"{out['only_old_fields']} {out['only_new_fields']}")
    rows = list(csv.DictReader(io.StringIO(tool.run("bench-compare", old_path, new_path,
                                                    "-o", "csv").stdout)))
    checks.check("compare csv: pairs and unpaired rows",
                 [r["status"] for r in rows] == ["paired"] * 3 + ["only_old", "only_new"])
    checks.check("compare csv: ratio", math.isclose(float(rows[0]["ratio"]), 1.25, rel_tol=1e-5))
    md = tool.run("bench-compare", old_path, new_path).stdout
    for want in ("- build_commit: aaaa → bbbb", "**+25.0 % faster**", "**-20.0 % slower**",
                 "within noise", "Only in OLD", "Only in NEW", "Mann-Whitney"):
        checks.check(f"compare md: {want!r}", want in md)

    svg = tool.path("compare.svg")
    tool.run("bench-compare", old_path, new_path, "--chart", svg)
    root = well_formed(checks, svg, "compare chart")
    if root is None:
        return
    pixel = rendered(checks, args, svg, root, "compare chart")
    if pixel is None:
        return
    plot = next(g for g in root.iter(NS + "g") if g.get("class") == "plot")
    ox, oy = translate(plot)
    lo, hi = float(plot.get("data-log-min")), float(plot.get("data-log-max"))
    width, row_h = float(plot.get("data-width")), float(plot.get("data-row-height"))
    for i, (key, colour) in enumerate(((("1", "tg64"), GREEN), (("1", "pp128"), RED),
                                       (("2", "tg64"), GREY))):
        ratio = expect[key][0]
        x = ox + (math.log(ratio) - lo) / (hi - lo) * width
        y = oy + (i + 0.5) * row_h
        got = pixel(int(round(x)), int(round(y)))
        checks.check(f"compare chart: dot of {key} at ratio {ratio:.3f} in its colour",
                     near(got, colour, 30), f"{got} vs {colour}")


def test_bad_input(checks, tool):
    good = tool.path("old.jsonl")
    bad = tool.path("bad.jsonl")
    with open(bad, "w") as f:
        f.write(open(good).readline() + '{"test": "tg64", "samples_ts": [1, \n')
    empty = tool.path("empty.jsonl")
    open(empty, "w").close()
    other = tool.path("other.jsonl")
    write_run(other, [run_record("m.ember", 16, "tg64", [1.0, 2.0], "cccc")])
    cases = [
        (["bench-compare", good, tool.path("missing.jsonl")], "cannot open"),
        (["bench-compare", good, bad], "bad.jsonl:2: not valid JSON"),
        (["bench-compare", good, empty], "empty.jsonl: no results"),
        (["bench-compare", good, other], "no result of"),
        (["bench-compare", good], "want two files, OLD and NEW (got 1)"),
        (["bench-compare", good, good, "-o", "xml"], "-o xml: unknown output format"),
        (["bench-compare", good, good, "--alpha", "2"], "--alpha: 2 is outside"),
        (["bench-chart"], "no bench file to draw"),
        (["bench-chart", bad], "bad.jsonl:2: not valid JSON"),
        (["bench", "-m", tool.path("small.ember"), "-p", "8", "-n", "0", "-r", "1",
          "--probe-mib", "16", "--history", tool.path("no/such/dir/h.jsonl")], "cannot open"),
    ]
    for argv, fragment in cases:
        r = subprocess.run([tool.ember, *argv], capture_output=True, text=True, timeout=300)
        checks.check(f"ember {' '.join(os.path.basename(a) for a in argv)}: status 1, "
                     f"{fragment!r}", r.returncode == 1 and fragment in r.stderr,
                     f"status {r.returncode}: {r.stderr.strip()[-300:]}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ember", required=True)
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--keep", action="store_true", help="keep the files")
    args = p.parse_args()
    missing = chromium_or_skip(args.chromium)
    if missing is not None:
        return missing
    checks = Checks()
    tmp = tempfile.mkdtemp(prefix="ember_bench_report_")
    tool = Tool(args.ember, tmp)
    try:
        test_history_and_bench_chart(checks, args, tool)
        test_chart_of_known_values(checks, args, tool)
        test_compare(checks, args, tool)
        test_bad_input(checks, tool)
    finally:
        remove_or_keep(tmp, args.keep)
    return checks.exit_code("bench reports: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
